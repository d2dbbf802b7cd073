"""The run stage: the self-describing run folder (:mod:`.folder`: files, weights, metrics, provenance),
its life (:mod:`.lifecycle`: create, clear, resume stamps, finish), its model card (:mod:`.card`), its
id (:mod:`.ids`) and a probe target loaded from it (:mod:`.targets`).

``from mechinit import runs`` gives the run-folder API of :mod:`.folder` (``runs.read_metrics``, ...)."""

from mechinit.runs.folder import (  # noqa: F401
    CARD,
    CONFIG,
    DATA,
    METRICS,
    RESUME,
    SNAPSHOTS,
    WEIGHTS,
    RunFolderError,
    append_metrics,
    atomic_write_bytes,
    compute_environment,
    git_commit,
    load_run_config,
    load_weights,
    provenance,
    read_json,
    read_metrics,
    read_tensors,
    save_tensors,
    save_weights,
    snapshot_path,
    snapshot_steps_on_disk,
    weights_of,
    write_json,
    write_metrics,
)
