"""Where passages and turns are found again: the Chroma client and collections, the keyword index, hybrid retrieval."""
