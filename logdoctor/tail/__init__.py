"""Tail mode: follow growing training logs and raise findings the moment they appear."""
