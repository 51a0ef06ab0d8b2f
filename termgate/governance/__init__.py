"""Who may do what, and the record of it (SPEC §4): accounts and sign-in (`accounts`,
`sso`), sign-off and flagged items (`signoff`, `flagged`), the audit chain's
verification (`audit_chain`), reviewers' verdicts and judge agreement (`verdicts`,
`agreement`), golden-set revisions and their approvals (`golden_revisions`,
`golden_approvals`) and waiting for a decision (`release`).

Its public names load on first use (PEP 562): importing one module of the package does not
import the others.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    'Account': 'accounts',
    'account_of': 'accounts',
    'current_account': 'accounts',
    'RESAMPLES': 'agreement',
    'SEED': 'agreement',
    'MIN_VERDICTS': 'agreement',
    'cohen_kappa': 'agreement',
    'kappa_interval': 'agreement',
    'AgreementTable': 'agreement',
    'agreement_table': 'agreement',
    'JudgeAgreement': 'agreement',
    'RaterAgreement': 'agreement',
    'AgreementReport': 'agreement',
    'judge_agreement': 'agreement',
    'rater_agreement': 'agreement',
    'agreement_report': 'agreement',
    'unvalidated_judges': 'agreement',
    'judge_unvalidated': 'agreement',
    'judge_items': 'agreement',
    'config_id': 'agreement',
    'recorded_agreement': 'agreement',
    'rejudge': 'agreement',
    'ChainReport': 'audit_chain',
    'parse_head': 'audit_chain',
    'verify_chain': 'audit_chain',
    'HEADER_KEYS': 'audit_chain',
    'FlaggedItem': 'flagged',
    'Approval': 'golden_approvals',
    'Revision': 'golden_approvals',
    'approvals_needed': 'golden_approvals',
    'list_revisions': 'golden_approvals',
    'find_revision': 'golden_approvals',
    'is_approved': 'golden_approvals',
    'revision_state': 'golden_approvals',
    'GOLDEN_ITEM': 'golden_approvals',
    'golden_flag': 'golden_approvals',
    'DEFAULT_MIN_WEIGHT': 'golden_revisions',
    'verdicts_for': 'golden_revisions',
    'QueryChange': 'golden_revisions',
    'Proposal': 'golden_revisions',
    'RevisionFile': 'golden_revisions',
    'propose': 'golden_revisions',
    'load_revision': 'golden_revisions',
    'record_proposal': 'golden_revisions',
    'approve': 'golden_revisions',
    'WaitResult': 'release',
    'wait_for_release': 'release',
    'parse_wait_seconds': 'release',
    'AWAITING': 'release',
    'DEFAULT_TIMEOUT': 'release',
    'DEFAULT_INTERVAL': 'release',
    'ROLES': 'signoff',
    'CAN_RUN': 'signoff',
    'SignoffRefused': 'signoff',
    'ReleaseState': 'signoff',
    'hash_password': 'signoff',
    'verify_password': 'signoff',
    'add_user': 'signoff',
    'disable_user': 'signoff',
    'set_role': 'signoff',
    'set_password': 'signoff',
    'set_aliases': 'signoff',
    'authenticate': 'signoff',
    'signin_delay': 'signoff',
    'refuse_sso': 'signoff',
    'owner_of': 'signoff',
    'flagged_items': 'signoff',
    'decide': 'signoff',
    'decide_as': 'signoff',
    'approval_blockers': 'signoff',
    'release_state': 'signoff',
    'release_states': 'signoff',
    'unsigned_state': 'signoff',
    'is_author': 'signoff',
    'record_hash': 'signoff',
    'SsoIdentity': 'sso',
    'identity_from_claims': 'sso',
    'sign_in': 'sso',
    'BIND_KIND': 'sso',
    'LABELS': 'verdicts',
    'CAN_RECORD': 'verdicts',
    'Verdict': 'verdicts',
    'VerdictTarget': 'verdicts',
    'check_target': 'verdicts',
    'record_verdict': 'verdicts',
    'list_verdicts': 'verdicts',
    'unflagged_sample': 'verdicts',
    'judge_name': 'verdicts',
}
"""name -> the submodule that defines it."""

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    if name in ['accounts', 'agreement', 'audit_chain', 'flagged', 'golden_approvals', 'golden_revisions', 'release', 'signoff', 'sso', 'verdicts']:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
