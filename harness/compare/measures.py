"""Which metrics rank systems: every metric here is higher-is-better except trec_eval's counts and Judged@k.

``num_ret`` (documents retrieved: the run's depth, whatever their relevance), ``num_rel`` (relevant
documents judged: the qrels', the same for every run on them) and ``num_nonrel_judged_ret`` (judged
non-relevant documents retrieved: grows with the depth too, and with the share of the run that was judged)
say how a run was made and judged, not how good it is: num_ret 980 -> 100 is a shallower run, not a worse
one (their metric classes say what they count: ``Metric.counts``). ``Judged@k`` (the share of the top k the
qrels judge) is the same kind of number: it measures how far the judgments cover the run, not the run. A
run that retrieves relevant documents the pool never saw drops on it; ir_measures offers it (and BEIR its
complement Hole@k) to warn that the other measures count unjudged documents as non-relevant, and ranx has
no such measure among those it ranks systems by. A drop in it is reported, never a regression. So no
value of theirs is the best, no paired test is run on them and no gate is put on them (nor does
``harness fuse --optimize`` maximise one):

* ``harness compare`` shows their means with no bold, no ▲ / ▼ and no details row;
* ``harness check -m num_ret`` is refused (exit 2): a gate that read them as higher-is-better failed a
  run cut to depth 100 (and a run finding documents outside the pool, on Judged@10), and one that passed
  them would gate nothing;
* the leaderboards (``harness bench``'s leaderboard.md, ``harness report``) mark no best value of theirs,
  and the report draws no significance groups and no ▲ / ▼ on them.

``num_rel_ret`` (relevant documents retrieved) is a quality measure like the others: higher is better,
and its tolerance (``check --tolerance``) is in documents per query (a mean over the queries).
"""

from __future__ import annotations

def count(metric: str) -> str | None:
    """What a metric (a canonical name, as results record it) counts when it is no quality measure (the
    metric's ``counts``: see above), else None (also for a name this build does not know)."""
    from harness.evaluation.metrics import parse_metric

    try:
        return parse_metric(metric).counts
    except ValueError:
        return None


def ranks_systems(metric: str) -> bool:
    """Whether a higher mean of ``metric`` is a better system (every metric but the counts)."""
    return count(metric) is None
