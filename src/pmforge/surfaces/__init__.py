"""What people touch: the CLI, the Streamlit app and its panels, evaluations and benchmarks."""
