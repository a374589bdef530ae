"""A dataset named by a value that is no str or path (an int id, None, bytes, a list) is one TypeError naming
it, from every entry point that parses a dataset name; before: AttributeError "'int' object has no attribute
'rstrip'" from inside DatasetRef.parse."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.datasets import DatasetRef, default_split, load_dataset, resolve


@pytest.mark.parametrize("value, shown", [(123, "int 123"), (None, "NoneType None"), (b"scifact", "bytes b'scifact'"),
                                          (["scifact"], "list ['scifact']")])
@pytest.mark.parametrize("call", [load_dataset, default_split, resolve, DatasetRef.parse])
def test_a_dataset_that_is_no_name_or_path_is_a_type_error_naming_it(call, value, shown):
    with pytest.raises(TypeError, match=r"a dataset is a name or a folder path \(a str or a Path\), got "
                                        + shown.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        call(value)


def test_names_and_paths_still_parse(tmp_path):
    assert DatasetRef.parse("scifact").text == "scifact"
    assert DatasetRef.parse(Path("scifact")).text == "scifact"
    assert DatasetRef.parse(tmp_path).text == str(tmp_path)
