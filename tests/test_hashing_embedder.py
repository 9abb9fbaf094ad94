"""The hashing embedder: the local model's windows, deterministic lexical vectors, chosen by settings."""

from __future__ import annotations

import numpy as np

from pmforge.core.settings import Settings
from pmforge.embed import make_embedder
from pmforge.embed.hashing import HashingEmbedder
from pmforge.embed.local import LocalEmbedder


def test_chosen_by_settings_and_signed_apart_from_the_model():
    embedder = make_embedder(Settings(embeddings="hashing"))
    assert isinstance(embedder, HashingEmbedder)
    assert embedder.signature != LocalEmbedder().signature  # a store filled by one is never read by the other


def test_vectors_are_deterministic_unit_length_and_lexical():
    embedder = HashingEmbedder()
    churn, restated, other = embedder.embed_documents(
        ["Small customers churned after the price rise", "small customer churn rose after pricing changed",
         "The warehouse roof leaks in winter"])
    assert embedder.embed_query("Small customers churned after the price rise") == churn
    assert abs(np.linalg.norm(churn) - 1) < 1e-9
    assert np.dot(churn, restated) > 0.3 > abs(np.dot(churn, other))


def test_windows_are_the_local_models_windows():
    text = "Shrink in produce rose to 6.1% across the Midwest stores. " * 120
    assert HashingEmbedder().windows(text) == LocalEmbedder().windows(text)


def test_the_local_model_batches_by_length_without_changing_a_vector():
    """Texts of very different lengths run in separate batches (padding costs as much as text); every text
    still gets the vector it gets alone, in the order asked."""
    long_text = " ".join(f"Store {i} marked down {i % 7} trays of bread before close." for i in range(60))
    texts = ["ok", long_text, "Dana runs the Duluth bakery.", long_text[:400], "yes"]
    model = LocalEmbedder()
    together = np.array(model.embed_documents(texts))
    alone = np.array([model.embed_documents([t])[0] for t in texts])
    assert together.shape == (5, 384)
    assert np.allclose(together, alone, atol=1e-5)
    assert not np.allclose(together[0], together[4])  # each text kept its own place
