"""Buffer storages (RAM, memmap) behind one base class and registry."""

from RLA.replay_buffer.storage.base import STORAGES, Storage, make_storage

__all__ = ["STORAGES", "Storage", "make_storage"]
