"""The snapshot format of replay buffers: names and manifests (format), verified file I/O
(file_io), segment layout, O_DIRECT reads (direct_read), commit, save, load, retention."""
