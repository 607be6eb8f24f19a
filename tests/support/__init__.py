"""Helpers shared by the test areas: the toy models, the tiny real-model checkpoints, the served-app harness and the
mutation record."""
