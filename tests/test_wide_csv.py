"""A wide metrics CSV is read by its columns (issue 10): a header or a row longer than the line cap (4,000
characters) is read from its START, cell by cell, so names stay aligned with values. Wide CSVs are ordinary: a W&B
export, per-class metrics, a Lightning CSVLogger with many logged keys have hundreds of columns (6-20 KB headers).

Every file here is written by the csv module, as those loggers write it (Lightning's CSVLogger uses csv.DictWriter)."""
import csv
import json
import os
import time

from trainwreck.cli import main
from trainwreck.collect import collect
from trainwreck.collect.readers.csvmetrics import MAX_COLUMNS, WIDE_METRICS
from trainwreck.collect.safeio import MAX_LINE_CHARS, BoundedFile
from trainwreck.locate import locate

ROWS = 60
NAN_STEP = 45


def _loss(step):  # distinctive: no other column holds values like these
    return float("nan") if step >= NAN_STEP else round(9.0 - 0.125 * step, 3)


def _wide(path, n_cols=800, loss_at=700):
    """`n_cols` columns: per-class accuracies (no metric name trainwreck knows), `train_loss` at `loss_at`, a
    `val_loss` right after it and an `lr` near the end; every other column holds a value unlike the loss."""
    cols = ["step"] + [f"train/per_class_acc_{i:04d}" for i in range(n_cols - 4)]
    cols[loss_at:loss_at] = ["train_loss", "val_loss"]
    cols.append("lr")
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for s in range(ROWS):
            row = [s] + [round(0.5 + 0.0001 * i, 4) for i in range(n_cols - 4)]
            row[loss_at:loss_at] = [_loss(s), 0.75]
            row.append(3e-4)
            w.writerow(row)
    return cols


def _diagnose(capsys, run):
    rc = main(["diagnose", str(run), "--json", "--no-probe"])
    out, err = capsys.readouterr()
    assert rc == 0 and "Traceback" not in err, err
    return json.loads(out)


def test_a_wide_header_keeps_its_columns_aligned_with_the_values(tmp_path, capsys):
    cols = _wide(tmp_path / "metrics.csv")
    assert len(",".join(cols)) > 4 * MAX_LINE_CHARS  # the header and every row are far over the line cap
    rep = _diagnose(capsys, tmp_path)
    loss = rep["metrics_summary"]["loss"]
    assert loss["path"] == "metrics.csv" and loss["n"] == ROWS
    assert loss["max"] == 9.0 and loss["min"] == _loss(NAN_STEP - 1)  # the train_loss column, not a neighbour
    assert loss["first_nonfinite_step"] == NAN_STEP and loss["nonfinite"] == ROWS - NAN_STEP
    assert rep["classification"] == "NaN"
    b = collect(locate(str(tmp_path)))
    assert [p.value for p in b.best_series("eval_loss").points] == [0.75] * ROWS
    assert {p.value for p in b.best_series("lr").points} == {3e-4}
    assert not [n for n in b.notes if "metrics.csv" in n and ("skipped" in n or "not" in n)], b.notes


def test_a_row_with_a_cell_too_many_is_skipped_never_shifted(tmp_path, capsys):
    cols = _wide(tmp_path / "metrics.csv", n_cols=600, loss_at=500)
    with open(tmp_path / "metrics.csv", "a", newline="") as fh:  # an unquoted comma in an early cell: one more cell
        row = [ROWS] + ["0.5"] * 3 + ["a", "b"] + ["0.5"] * (len(cols) - 5)
        row[cols.index("train_loss") + 1] = "123.0"  # what a shifted read would take for the loss
        csv.writer(fh).writerow(row)
    rep = _diagnose(capsys, tmp_path)
    notes = "\n".join(rep["notes"])
    assert f"metrics.csv: line {ROWS + 2}: row has {len(cols) + 1} cells, the header {len(cols)}; skipped" in notes
    loss = rep["metrics_summary"]["loss"]
    assert loss["n"] == ROWS and loss["max"] == 9.0  # no 123.0


def test_a_100000_column_csv_is_bounded_and_says_what_it_did_not_read(tmp_path, capsys):
    n = 100_000
    # every column a loss component by its name (`loss_c7`), grad_norm past the column cap
    cols = ["step", "loss"] + [f"loss_c{i}" for i in range(n - 3)] + ["grad_norm"]
    with open(tmp_path / "metrics.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for s in range(10):
            w.writerow([s, 5.0 - 0.25 * s] + [""] * (n - 3) + [1.0])
    assert os.path.getsize(tmp_path / "metrics.csv") > 1 << 20
    t0 = time.perf_counter()
    rep = _diagnose(capsys, tmp_path)
    took = time.perf_counter() - t0
    notes = "\n".join(rep["notes"])
    assert f"metrics.csv: header longer than 64 KB or {MAX_COLUMNS} columns; read its first {MAX_COLUMNS} columns" \
        in notes
    assert f"metrics.csv: {MAX_COLUMNS - 1} metric columns; the first {WIDE_METRICS} read, the others not" in notes
    assert len(rep["trajectories"]) <= WIDE_METRICS  # the report stays small: not 4,096 series
    loss = rep["metrics_summary"]["loss"]
    assert loss["n"] == 10 and loss["last"] == 5.0 - 0.25 * 9  # the early column is read, aligned
    assert "grad_norm" not in rep["metrics_summary"]  # past the cap: not read, and said so
    assert took < 10, took  # ~1 s; re-redacting the row once per cell (what the probe found) took minutes


def test_the_cells_of_a_wide_row_are_redacted_each_and_stay_in_place(tmp_path):
    token = "hf" + "_" + "Q7x" * 12  # a planted token, built here (no secret-shaped literal in the repository)
    cells = [f"{i}.5" for i in range(900)]
    cells[3] = f"note {token}"  # near the start: the part of the row a Line (its end) does not hold
    cells[600] = f"api_key={'ab12' * 10}"
    (tmp_path / "metrics.csv").write_text(",".join(cells) + "\n")
    with BoundedFile(os.path.realpath(tmp_path), str(tmp_path / "metrics.csv")) as f:
        line = f.lines(0, f.size)[0]
        assert line.text.startswith("[…")  # the Line keeps the end only
        got, whole = f.cells(0, lambda t: t.split(","))
        cut, cut_whole = f.cells(0, lambda t: t.split(","), limit=1000, most=None)
        few, few_whole = f.cells(0, lambda t: t.split(","), most=10)
    assert whole and len(got) == 900
    assert token not in "".join(got) and "[REDACTED" in got[3] and got[3].startswith("note ")
    assert "ab12" * 10 not in got[600] and got[600].startswith("api_key=")
    assert got[599] == "599.5" and got[601] == "601.5" and got[-1] == "899.5"  # no cell moved
    assert not cut_whole and cut == got[:len(cut)] and len(",".join(cut)) < 1000  # the cell cut into is dropped
    assert not few_whole and few == got[:10]


def test_a_large_wide_csv_is_sampled_across_its_middle_and_every_point_is_aligned(tmp_path):
    """Past the whole-read limit (2 MB) a metrics file is sampled: a wide row does not fit the sample window of a
    narrow one, so the window widens to the header's width (and fewer rows are sampled, the bytes stay bounded)."""
    from trainwreck.collect.metricfile import FULL_PARSE_LIMIT, TAIL_ENTRIES
    cols = ["step"] + [f"train/per_class_acc_{i:04d}" for i in range(700)] + ["train_loss"]
    rows = 0
    with open(tmp_path / "metrics.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        while fh.tell() < FULL_PARSE_LIMIT + (1 << 20):
            w.writerow([rows] + [round(0.5 + 0.0001 * i, 4) for i in range(700)] + [round(9 - 0.01 * rows, 2)])
            rows += 1
    b = collect(locate(str(tmp_path)))
    pts = b.best_series("loss").points
    assert all(p.value == round(9 - 0.01 * p.step, 2) for p in pts)  # head, samples and tail: all the loss column
    tail_from = rows - TAIL_ENTRIES
    middle = [p for p in pts if 20 < p.step < tail_from]  # neither the first 64 KB nor the tail
    assert len(middle) >= 50, (len(pts), rows)


def test_a_narrow_csv_with_trailing_commas_is_read_whole(tmp_path):
    rows = "".join(f"{i},{'nan' if i >= 150 else 2.0 - i * 1e-3},\n" for i in range(300))
    (tmp_path / "metrics.csv").write_text("step,loss\n" + rows)
    b = collect(locate(str(tmp_path)))
    pts = b.best_series("loss").points
    assert len(pts) == 300 and next(p.step for p in pts if p.value != p.value) == 150


def test_a_column_appended_from_some_step_on_keeps_the_header_columns(tmp_path):
    """A logger that adds `val_loss` from step 50 without rewriting the header: the first such row is skipped
    (alone it could be a stray comma), the rest are read by the header's columns."""
    rows = "".join(f"{i},{'nan' if i >= 200 else 2.0 - i * 1e-3}" + (",1.5" if i >= 50 else "") + "\n"
                   for i in range(300))
    (tmp_path / "metrics.csv").write_text("step,loss\n" + rows)
    b = collect(locate(str(tmp_path)))
    pts = b.best_series("loss").points
    assert len(pts) == 299 and next(p.step for p in pts if p.value != p.value) == 200
    assert any("row has 3 cells, the header 2; skipped" in n for n in b.notes)
