"""Tests of sparsetab._persistence: model files, exported programs and ONNX."""
