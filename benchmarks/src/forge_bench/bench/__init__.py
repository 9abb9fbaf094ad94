"""`forge bench`: figures, never assertions. Each benchmark drives the real code paths."""
