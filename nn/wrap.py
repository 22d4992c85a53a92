"""Training wrappers: `nn.WithLossCell`, `nn.TrainOneStepCell`."""

__all__: list[str] = []
