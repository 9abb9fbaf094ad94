"""An opened project: the services it runs on, its workspace and store, recovery after a crash, taking a turn back."""
