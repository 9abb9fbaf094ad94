"""Keeping a project sound: doctor, re-indexing, migrations between stores."""
