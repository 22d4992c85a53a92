def tensor_call(x):
    # programs.py:256  t = gj.Tensor([1.0, 2.0, 3.0, 4.0], gj.float32)
    t = _tensor.tensor_data((1.0, 2.0, 3.0, 4.0), np.float32)
    # programs.py:257  return x + t
    return _tensor.as_tensor(x + t)
