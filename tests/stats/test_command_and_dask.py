"""The ``qkforms stats`` command and the dask executor (same tables as the local one)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from stats_inputs import mixed_survey_rows

from qkforms.cli import main
from qkforms.stats import observations, read_parquet


@pytest.fixture(scope="module")
def mixed_survey() -> tuple[dict, dict]:
    """Two Gaussian 'models' of different shapes and one rank-one model."""
    return mixed_survey_rows()


def _write_survey(directory: Path, heads: dict, spectra: dict) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(heads), directory / "heads.parquet")
    pq.write_table(pa.table(spectra), directory / "spectra.parquet")


def test_dask_local_cluster_gives_the_same_tables(mixed_survey) -> None:
    distributed = pytest.importorskip("dask.distributed")
    heads, spectra = mixed_survey
    local = observations(heads, spectra, seed=3, n_boot=50)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = observations(heads, spectra, seed=3, n_boot=50, executor="dask",
                              client=client)
    assert set(local) == set(remote)
    for name in local:
        assert local[name] == remote[name], name


def test_cli_writes_csv_parquet_and_markdown(tmp_path, mixed_survey) -> None:
    heads, spectra = mixed_survey
    run = tmp_path / "run"
    _write_survey(run, heads, spectra)
    status = main(["stats", str(run), "--bootstrap", "50", "--no-fits", "--seed", "0"])
    assert status == 0
    out = run / "stats"
    md = (out / "observations.md").read_text(encoding="utf-8")
    assert "Observation 1" in md and "gauss-a" in md and "| ALL |" in md
    # CSV and Parquet hold the same table the library returns
    direct = observations(read_parquet(run / "heads.parquet"),
                          read_parquet(run / "spectra.parquet"), seed=0, n_boot=50, fits=False)
    for name in ("symmetric_energy", "accumulation_test", "spectral_types"):
        with open(out / f"{name}.csv", newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        table = direct[name]
        assert len(rows) == len(table)
        for got, want in zip(rows, table.rows(), strict=True):
            for key, value in want.items():
                if isinstance(value, float) and not np.isnan(value):
                    assert float(got[key]) == value, (name, key)
                elif isinstance(value, str):
                    assert got[key] == value
        assert read_parquet(out / f"{name}.parquet") == table


def test_cli_pools_several_directories(tmp_path, mixed_survey) -> None:
    heads, spectra = mixed_survey
    keep = [i for i, m in enumerate(heads["model"]) if m == "gauss-a"]
    rest = [i for i, m in enumerate(heads["model"]) if m != "gauss-a"]
    for name, idx in (("one", keep), ("two", rest)):
        _write_survey(tmp_path / name, {k: [v[i] for i in idx] for k, v in heads.items()},
                      {k: [v[i] for i in idx] for k, v in spectra.items()})
    out = tmp_path / "pooled"
    assert main(["stats", str(tmp_path / "one"), str(tmp_path / "two"), "--out", str(out),
                 "--bootstrap", "0", "--no-fits", "--no-baseline"]) == 0
    table = read_parquet(out / "symmetric_energy.parquet")
    assert table["model"].tolist() == ["gauss-a", "gauss-b", "rank-one", "ALL"]


def test_cli_reports_a_missing_survey(tmp_path, capsys) -> None:
    assert main(["stats", str(tmp_path)]) == 1
    assert "heads.parquet" in capsys.readouterr().err
