"""Run every probe on the shipped reference models and print the markdown table for docs/probes.md.

usage: python experiments/probes/compare.py   (reads the zoo entries small-init-s{0,1,2}, large-init-s{0,1,2})
"""

import statistics

from mechinit import probes, zoo

KEYS = [
    ("information_flow", "mechanism"), ("information_flow", "key_to_anchor_mass"), ("information_flow", "anchors_to_last_mass"),
    ("representation_tsne", "symmetric_merge_score"), ("representation_tsne", "mean_mirror_ratio"),
    ("cosine_maps", "parallelism_gap"), ("cosine_maps", "mirror_gap"), ("cosine_maps", "value_parallelism_gap"),
    ("condensation", "n_groups_90"), ("condensation", "largest_group"), ("condensation", "mean_abs_cos"),
    ("embedding_spectrum", "effective_rank"), ("embedding_spectrum", "top_k_energy"), ("embedding_spectrum", "half_growth_step"),
    ("key_position", "inferential_by_position"), ("key_position", "symmetric_by_position"),
    ("deviation", "at_inferential"), ("deviation", "at_symmetric"), ("deviation", "near"), ("deviation", "mode"),
]


def fmt(v):
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, list) and all(isinstance(x, float) for x in v):
        return "[" + ", ".join(f"{x:.2f}" for x in v) + "]"
    return "null" if v is None else str(v)


def main():
    names = [f"{p}-s{s}" for p in ("small-init", "large-init") for s in range(3)]
    heads = {}
    for name in names:
        t = zoo.load_target(name)
        heads[name] = {p: probes.run(p, t.model, t.task, snapshots=t.snapshots).headline for p in probes.available()}
        s = zoo.card(name)["summary"]
        heads[name]["verdict"] = {"(4,3)": f"{s['verdict_43']} ({s['acc_43_inferential']:.2f}/{s['acc_43_symmetric']:.2f})"}
    print("| headline | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    print("| (4,3) verdict (inf/sym acc) | " + " | ".join(heads[n]["verdict"]["(4,3)"] for n in names) + " |")
    for probe, key in KEYS:
        print(f"| {probe}.{key} | " + " | ".join(fmt(heads[n][probe].get(key)) for n in names) + " |")
    for probe, key in KEYS:
        vals = [[heads[f"{p}-s{s}"][probe].get(key) for s in range(3)] for p in ("small-init", "large-init")]
        if key != "mode" and all(isinstance(v, (int, float)) for row in vals for v in row):  # a mode offset has no mean
            print(f"{probe}.{key}: small {statistics.mean(vals[0]):.3f} ± {statistics.pstdev(vals[0]):.3f}, "
                  f"large {statistics.mean(vals[1]):.3f} ± {statistics.pstdev(vals[1]):.3f}")


if __name__ == "__main__":
    main()
