"""The retrieval effect of an expansion change (issue 34): does search get better?

Inputs (a corpus, relevance judgments, TREC run files), the engines that rank documents
(Tantivy embedded, a team's own engine over HTTP), the metrics (ir-measures) and the
orchestration that runs the unexpanded, baseline and candidate queries (docs/retrieval.md).
"""
