"""The metric registry: importing this package registers every metric family."""

from harness.evaluation.metrics import (  # noqa: F401
    average_precision, bpref, dcg, eleven_pt_avg, iprec_at_recall, judged, ndcg, ndcg_rel, num_nonrel_judged_ret,
    num_rel, num_rel_ret, num_ret, precision, r_precision, recall, reciprocal_rank, rndcg, rprec_mult, set_f,
    set_map, set_p, set_recall, set_relative_p, success)
from harness.evaluation.metrics.average_precision import AP, MAP
from harness.evaluation.metrics.base import (REGISTRY, Metric, evaluated_names, level_names, parse_metric,
                                              takes_cutoff)
from harness.evaluation.metrics.bpref import Bpref
from harness.evaluation.metrics.dcg import DCG
from harness.evaluation.metrics.discounting import SCHEMES
from harness.evaluation.metrics.eleven_pt_avg import ElevenPtAvg
from harness.evaluation.metrics.iprec_at_recall import IPrecAtRecall
from harness.evaluation.metrics.judged import Judged
from harness.evaluation.metrics.ndcg import NDCG, NDCGAll
from harness.evaluation.metrics.ndcg_rel import NDCGRel
from harness.evaluation.metrics.num_nonrel_judged_ret import NumNonrelJudgedRet
from harness.evaluation.metrics.num_rel import NumRel
from harness.evaluation.metrics.num_rel_ret import NumRelRet
from harness.evaluation.metrics.num_ret import NumRet
from harness.evaluation.metrics.precision import Precision
from harness.evaluation.metrics.r_precision import RPrecision
from harness.evaluation.metrics.recall import RCap, Recall
from harness.evaluation.metrics.reciprocal_rank import MRR, RR
from harness.evaluation.metrics.rndcg import RNDCG
from harness.evaluation.metrics.rprec_mult import RPrecMult
from harness.evaluation.metrics.set_f import SetF
from harness.evaluation.metrics.set_map import SetMap
from harness.evaluation.metrics.set_p import SetP
from harness.evaluation.metrics.set_recall import SetRecall
from harness.evaluation.metrics.set_relative_p import SetRelativeP
from harness.evaluation.metrics.success import Success

DEFAULT_FAMILIES = ("NDCG", "MAP", "Recall", "P", "R_cap", "MRR")
DEFAULT_K = (1, 3, 5, 10, 100, 1000)

__all__ = ["Metric", "parse_metric", "takes_cutoff", "level_names", "evaluated_names", "REGISTRY", "NDCG", "NDCGAll", "DCG", "MAP",
           "AP", "Precision", "Recall", "RCap", "MRR", "RR", "RPrecision", "Bpref", "Success", "Judged",
           "NumRet", "NumRel", "NumRelRet", "IPrecAtRecall", "SetP", "SetRecall", "SetF", "ElevenPtAvg", "SetMap",
           "SetRelativeP", "NumNonrelJudgedRet", "RPrecMult", "NDCGRel", "RNDCG", "SCHEMES",
           "DEFAULT_FAMILIES", "DEFAULT_K"]
