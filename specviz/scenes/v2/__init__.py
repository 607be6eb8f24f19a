"""Scenes v2 (issue 13): 64x64 textured scenes, 16x16 token grid, a redundant VQ codebook; beside v1 until v2
is trained and shown better."""
