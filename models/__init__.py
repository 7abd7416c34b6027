"""CNN architectures and their registry (models.model_config)."""
