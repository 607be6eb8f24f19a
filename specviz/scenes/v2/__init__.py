"""Scenes v2 (issue 13): 64x64 textured scenes, a 16x16 token grid and a redundant VQ codebook, built beside v1
until v2 is trained and shown better.

- world.py      the textured world on v1's caption grammar and held-out rule
- train.py      the V2 `Stack` and its stage steps; python -m specviz.scenes.v2.train STAGE [STAGE ...]
- ambiguity.py  token-ambiguity measures of a model's own AR samples (the model card's section)
- peek.py       samples and ambiguity of an in-training target checkpoint

Weights: assets/v2/; resumable checkpoints and the encoded code pool: .cache/train_v2/.
"""
