"""The `task_memory` read model: each task's folder, the living memory an agent reads on every wake-up.

    progress.md     what has been done and what is next (read first on every wake-up); long texts
                    are cut short there, with a pointer to the file holding them whole
    description.md  the task's description as written, when it has one
    log.md          chronological history; past 500 lines the oldest 80% go into a log_summary
    context.json    structured state: status, active loop ids, workflows, conversation id
    conversation.md every message sent and received: who wrote it (agent, contact, owner,
                    system), when, and the text (`domain/conversation.py` says which events)
    inbox/          one file per signal stored in the task's inbox
    workflows/      workflow outputs of the last 7 days; older ones in workflows/archive/,
                    with one archive_summary per ISO week

Everything is rendered from the task's events (and its loops' registrations), so a rebuild
gives the same folder. Stored are a per-task state document (`state`), every log line (`log`),
every turn (`conversation`), and the inbox and workflow files (`workflows`); progress.md,
context.json, log.md and the summaries are rendered when read (`progress`, `folder`).
Time in this read model is event time: workflow outputs rotate when a later event of the task
arrives, never by a clock. A completed, cancelled or expired task keeps its folder, archived.
"""

from loopline.projections.task_memory.conversation import conversation
from loopline.projections.task_memory.folder import active_tasks, find, listing, read, root
from loopline.projections.task_memory.progress import render_progress
from loopline.projections.task_memory.schema import memory_files, memory_log, memory_tasks, memory_turns
from loopline.projections.task_memory.state import handlers, prefetch

name = "task_memory"
cost = 5.5  # seconds to rebuild bench/rebuild.py's store alone, to share rebuild work evenly
tables = (memory_tasks, memory_log, memory_turns, memory_files)

__all__ = [
    "active_tasks", "conversation", "cost", "find", "handlers", "listing", "name", "prefetch", "read",
    "render_progress", "root", "tables",
]
