"""The ground floor: settings, state models, errors, tokens, and the workspace on disk (atomic files, the lock, the transcript)."""
