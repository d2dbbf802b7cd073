"""`mechinit zoo list` as text: the index table (:func:`mechinit.zoo.list`) cut to 100 columns, or whole with
``--wide``. Imports neither torch nor TransformerLens."""

NARROW_COLUMNS = ("id", "aliases", "gamma", "seeds", "headline", "verdict")  # without --wide: <= 100 characters


def seeds(row) -> str:
    """``init/data`` seeds of an index row (the replay's text when there is one); entries published before the
    two seeds existed have ``seed`` only."""
    import pandas as pd

    def known(key):
        return key in row and not pd.isna(row[key])

    if known("replay"):
        return str(row["replay"])
    if known("init_seed") and known("data_seed"):
        return f"{int(row['init_seed'])}/{int(row['data_seed'])}"
    return f"{int(row['seed'])}/{int(row['seed'])}" if known("seed") else "null"


def format_table(table, wide: bool = False) -> str:
    """The zoo index as text: columns that are null for every entry left out; without ``wide`` only
    the narrow set, numbers to 3 significant digits and aliases cut to fit 100 characters."""
    table = table.drop(columns=["zoo_dir"], errors="ignore").dropna(axis=1, how="all")
    if wide:
        return table.to_string(index=False, float_format=lambda v: f"{v:.3g}", na_rep="null")
    table = table.assign(seeds=[seeds(row) for _, row in table.iterrows()])
    table = table[[c for c in NARROW_COLUMNS if c in table.columns]]
    for width in range(18, 5, -1):  # aliases cut until the lines fit (a longer id leaves them less room)
        cut = table.assign(aliases=table["aliases"].map(lambda a: fit_aliases(a, width))) if "aliases" in table else table
        text = cut.to_string(index=False, float_format=lambda v: f"{v:.3g}", na_rep="null")
        if max(map(len, text.splitlines())) <= 100 or "aliases" not in table:
            break
    return text


def fit_aliases(aliases, width: int) -> str:
    """Comma-joined aliases in at most ``width`` characters: shortest first (the everyday names, such as
    ``small-init``), whole names only, with ``+N`` for those left out; cut with "…" only when even the
    shortest is longer than ``width``."""
    if not isinstance(aliases, str) or len(aliases) <= width:
        return aliases
    names = sorted(aliases.split(","), key=lambda a: (len(a), a))
    for keep in range(len(names) - 1, 0, -1):
        text = ",".join(names[:keep]) + f" +{len(names) - keep}"
        if len(text) <= width:
            return text
    return names[0] if len(names[0]) <= width else names[0][:width - 1] + "…"
