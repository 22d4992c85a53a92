"""The part of MindSpore's MindIR protobuf schema graphjit writes and reads, described here with protobuf's
`descriptor_pb2` API (no generated code is committed: the message classes are built when first needed).

MindIR (`mind_ir.proto`, package `mind_ir`, proto2) is MindSpore's model format. Only the fields below
are described, with MindSpore's field numbers and types, so a file MindSpore writes parses into them
field for field; a field not described here (a quantization table, a parallel layout, ...) is kept by
protobuf as an unknown field, and the reader refuses a file that has any (`unknown_fields`).

Why descriptors rather than a `.proto` compiled by protoc: generated `_pb2` modules are tied to the
protobuf version that generated them (newer runtimes refuse older generated code), and a build step
would be needed; descriptors built at run time work with any protobuf >= 4 and keep the schema in one
readable table below.
"""

from __future__ import annotations

from functools import lru_cache

from ..graph.diagnostics import GraphjitError

INSTALL = "pip install 'graphjit[mindir]'"

# (message, [(field name, number, label, type)]) ; label: o optional, r repeated ; type: a scalar name,
# "enum:<Enum>" or the name of a message
_OPT, _REP = "o", "r"
AttributeType = ["UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL",
                 "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16", "TENSOR", "GRAPH",
                 "TENSORS", "TUPLE", "LIST", "DICT", "UMONAD", "IOMONAD", "NONE"]
DataType = ["UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL",
            "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT64"]
PrimType = {"PRIMITIVE": 1, "PRIMITIVE_FUNCTION": 2}

MESSAGES = [
    ("SeqInfoProto", [("is_dyn_len", 1, _OPT, "bool"), ("tuple_elem_item", 2, _OPT, "AttributeProto")]),
    ("AttributeProto", [
        ("name", 1, _OPT, "string"), ("f", 2, _OPT, "float"), ("i", 3, _OPT, "int64"), ("d", 4, _OPT, "double"),
        ("s", 5, _OPT, "bytes"), ("t", 6, _OPT, "TensorProto"), ("g", 7, _OPT, "GraphProto"),
        ("floats", 8, _REP, "float"), ("doubles", 9, _REP, "double"), ("ints", 10, _REP, "int64"),
        ("strings", 11, _REP, "bytes"), ("tensors", 12, _REP, "TensorProto"), ("graphs", 13, _REP, "GraphProto"),
        ("doc_string", 14, _OPT, "string"), ("ref_attr_name", 15, _OPT, "string"),
        ("type", 16, _OPT, "enum:AttributeType"), ("values", 17, _REP, "AttributeProto"),
        ("seq_info", 18, _OPT, "SeqInfoProto")]),
    ("ValueInfoProto", [("name", 1, _OPT, "string"), ("tensor", 2, _REP, "TensorProto"),
                        ("doc_string", 3, _OPT, "string"), ("denotation", 4, _OPT, "string"),
                        ("attr_info", 5, _OPT, "AttributeProto")]),
    ("NodeProto", [("input", 1, _REP, "string"), ("output", 2, _REP, "string"), ("name", 3, _OPT, "string"),
                   ("op_type", 4, _OPT, "string"), ("attribute", 5, _REP, "AttributeProto"),
                   ("doc_string", 6, _OPT, "string"), ("domain", 7, _OPT, "string"),
                   ("node_attr", 8, _REP, "AttributeProto"), ("primal_attr", 9, _REP, "AttributeProto")]),
    ("ExternalDataProto", [("location", 1, _OPT, "string"), ("offset", 2, _OPT, "int64"),
                           ("length", 3, _OPT, "int64")]),
    ("TensorProto", [
        ("dims", 1, _REP, "int64"), ("data_type", 2, _OPT, "int32"), ("float_data", 3, _REP, "float"),
        ("int32_data", 4, _REP, "int32"), ("string_data", 5, _REP, "bytes"), ("int64_data", 6, _REP, "int64"),
        ("name", 7, _OPT, "string"), ("doc_string", 8, _OPT, "string"), ("raw_data", 9, _OPT, "bytes"),
        ("double_data", 10, _REP, "double"), ("uint64_data", 11, _REP, "uint64"),
        ("external_data", 12, _OPT, "ExternalDataProto"), ("ref_key", 13, _OPT, "string"),
        ("min_dims", 14, _REP, "int64"), ("max_dims", 15, _REP, "int64"),
        ("compression_type", 16, _OPT, "int32")]),
    ("GraphProto", [("node", 1, _REP, "NodeProto"), ("name", 2, _OPT, "string"),
                    ("parameter", 3, _REP, "TensorProto"), ("doc_string", 4, _OPT, "string"),
                    ("input", 5, _REP, "ValueInfoProto"), ("output", 6, _REP, "ValueInfoProto"),
                    ("bprop_hash", 7, _OPT, "string"), ("attribute", 8, _REP, "AttributeProto"),
                    ("bprop_filepath", 9, _OPT, "string")]),
    ("PrimitiveProto", [("name", 1, _OPT, "string"), ("op_type", 2, _OPT, "string"),
                        ("attribute", 3, _REP, "AttributeProto"), ("instance_name", 4, _OPT, "string"),
                        ("prim_type", 5, _OPT, "int32")]),
    ("ModelProto", [("ir_version", 1, _OPT, "string"), ("producer_name", 2, _OPT, "string"),
                    ("producer_version", 3, _OPT, "string"), ("domain", 4, _OPT, "string"),
                    ("model_version", 5, _OPT, "string"), ("doc_string", 6, _OPT, "string"),
                    ("graph", 7, _OPT, "GraphProto"), ("functions", 8, _REP, "GraphProto"),
                    ("little_endian", 10, _OPT, "bool"), ("primitives", 12, _REP, "PrimitiveProto"),
                    ("mind_ir_version", 13, _OPT, "int64")]),
]


def _module():
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError:
        raise GraphjitError(f"MindIR files need the protobuf package, which is not installed ({INSTALL})") from None
    return descriptor_pb2, descriptor_pool, message_factory


@lru_cache(maxsize=1)
def messages() -> dict:
    """{message name: class} for the messages above (built once, in a pool of their own)."""
    descriptor_pb2, descriptor_pool, message_factory = _module()
    F = descriptor_pb2.FieldDescriptorProto
    scalars = {"string": F.TYPE_STRING, "bytes": F.TYPE_BYTES, "float": F.TYPE_FLOAT, "double": F.TYPE_DOUBLE,
               "int64": F.TYPE_INT64, "int32": F.TYPE_INT32, "uint64": F.TYPE_UINT64, "bool": F.TYPE_BOOL}
    proto = descriptor_pb2.FileDescriptorProto(name="graphjit_mind_ir.proto", package="mind_ir", syntax="proto2")
    for name, fields in MESSAGES:
        message = proto.message_type.add(name=name)
        if name == "AttributeProto":
            enum = message.enum_type.add(name="AttributeType")
            for k, value in enumerate(AttributeType):
                enum.value.add(name=value, number=k)
        for field_name, number, label, kind in fields:
            field = message.field.add(name=field_name, number=number,
                                      label=F.LABEL_REPEATED if label == _REP else F.LABEL_OPTIONAL)
            if kind in scalars:
                field.type = scalars[kind]
            elif kind.startswith("enum:"):
                field.type, field.type_name = F.TYPE_ENUM, f".mind_ir.{name}.{kind[5:]}"
            else:
                field.type, field.type_name = F.TYPE_MESSAGE, f".mind_ir.{kind}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"mind_ir.{name}"))
            for name, _ in MESSAGES}


def unknown_fields(message) -> bool:
    """Whether `message` or any message inside it carries a field this schema does not describe."""
    from google.protobuf import unknown_fields as uf
    stack = [message]
    while stack:
        m = stack.pop()
        if len(uf.UnknownFieldSet(m)):
            return True
        for field, value in m.ListFields():
            if field.message_type is not None:
                stack.extend([value] if hasattr(value, "ListFields") else value)
    return False
