"""The original's ``RLA.easy_tf.saver_tools`` (TF1 ``tf.train.Saver`` helpers): TensorFlow only."""

from __future__ import annotations

from RLA.easy_tf import tensorflow_only

_SAVE = "call exp_manager.new_saver(max_to_keep) and exp_manager.save_checkpoint(model_dict={...}) (PyTorch)"
_LOAD = "call ExperimentLoader().load_from_record_date() or exp_manager.load_checkpoint() (PyTorch)"

new_saver = tensorflow_only("RLA.easy_tf.saver_tools.new_saver", _SAVE)
save_checkpoint = tensorflow_only("RLA.easy_tf.saver_tools.save_checkpoint", _SAVE)
load_checkpoint = tensorflow_only("RLA.easy_tf.saver_tools.load_checkpoint", _LOAD)
load_tester_from_record_date = tensorflow_only("RLA.easy_tf.saver_tools.load_tester_from_record_date", _LOAD)

__all__ = ["load_checkpoint", "load_tester_from_record_date", "new_saver", "save_checkpoint"]
