"""Loss cells (`nn.CrossEntropyLoss`, `nn.MSELoss`, ...): thin Cells over `graphjit.ops` losses."""

__all__: list[str] = []
