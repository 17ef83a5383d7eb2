"""Files a fitted model is written to and read from: one wing of the package (docs/architecture.md).

``model_file`` (the versioned model file, no pickle), ``export`` (serving programs:
torch.export, ONNX, TorchScript), ``onnx`` (the ONNX conversion and its optional dependencies)
and ``files`` (atomic writes).
"""
