"""The snapshot format of replay buffers: segments, manifests, commit, load, retention."""
