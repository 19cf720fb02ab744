"""Qt widgets; each binds to a model from app.models."""
