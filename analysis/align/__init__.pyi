"""The alignment loop: people's step labels and their dev/test split, judge specs measured
against people, compared, and improved from their disagreements (``tsq align``)."""

from ._charts import (
    scores_frame as scores_frame,
    scores_table as scores_table,
    spec_agreement_chart as spec_agreement_chart,
)
from ._labels import (
    DEFAULT_TEST_SHARE as DEFAULT_TEST_SHARE,
    LabelSet as LabelSet,
    Reference as Reference,
    assign_splits as assign_splits,
    label_set as label_set,
    read_step_labels as read_step_labels,
    references as references,
    session_of as session_of,
)
from ._loop import (
    SAMPLE_SPECS as SAMPLE_SPECS,
    AlignReport as AlignReport,
    Judging as Judging,
    SplitChoice as SplitChoice,
    Tuning as Tuning,
    estimate as estimate,
    labelled_steps as labelled_steps,
    plan as plan,
    render_items as render_items,
    run_align as run_align,
    sample_loop as sample_loop,
    sample_store as sample_store,
)
from ._metrics import (
    CASCADE_SHARES as CASCADE_SHARES,
    NO_WORSE_MARGIN as NO_WORSE_MARGIN,
    CascadePoint as CascadePoint,
    Comparison as Comparison,
    RaterScore as RaterScore,
    RaterVerdict as RaterVerdict,
    SpecScore as SpecScore,
    compare as compare,
    labels_needed as labels_needed,
    mcnemar_p as mcnemar_p,
    rater_verdict as rater_verdict,
    score_spec as score_spec,
)
from ._tune import (
    CAUSES as CAUSES,
    Disagreement as Disagreement,
    LeakError as LeakError,
    amended_spec as amended_spec,
    disagreements as disagreements,
    examples_spec as examples_spec,
    proposal_request as proposal_request,
    require_dev as require_dev,
    spec_diff as spec_diff,
    suggest_cause as suggest_cause,
)
