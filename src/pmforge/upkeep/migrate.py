"""`forge migrate`: copy a project's vectors between its embedded store and a shared Chroma server.

Vectors are copied as they are (nothing is re-embedded), the source is left in place, and the copy is
checked record for record before Forge reports success.
"""

from __future__ import annotations

from typing import Literal

from pmforge.core.errors import ForgeError
from pmforge.core.settings import Settings
from pmforge.core.workspace import Workspace
from pmforge.embed import Embedder
from pmforge.index.collections import CONVERSATIONS, DOCUMENTS, PARENTS
from pmforge.project.project import open_store


def migrate(ws: Workspace, embedder: Embedder, settings: Settings, to: Literal["server", "local"]) -> str:
    source = open_store(ws, embedder.signature, settings, server=(to == "local"))
    target = open_store(ws, embedder.signature, settings, server=(to == "server"))
    with ws.operations.marked(f"migrate to {to}"):
        manifest = ws.load_manifest()
        expected = {f.file_id for f in manifest.file_summaries if f.indexed}
        if expected != source.documents.file_ids():
            raise ForgeError(
                f"The vectors in {source.location} do not match the project's files; run "
                f"`forge doctor {ws.slug} --fix` (or `forge reindex {ws.slug}`) first."
            )
        copied = target.upkeep.copy_from(source)
    where = (f"the Chroma server at {settings.chroma_host}:{settings.chroma_port}" if to == "server"
             else "the project's embedded store")
    use = ("Forge uses it for every project while CHROMA_HOST is set" if to == "server"
           else "Forge uses it when CHROMA_HOST is not set")
    return (f"Copied {copied[DOCUMENTS]} passages, {copied[PARENTS]} sections and {copied[CONVERSATIONS]} turns of "
            f"'{ws.slug}' to {where}; {use}. The copy in {source.location} was left as it was.")
