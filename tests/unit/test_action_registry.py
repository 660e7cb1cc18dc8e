"""The action registry (seed 002 §15.1–§15.2): which actions wait for the owner, and params checked by name."""

from __future__ import annotations

import pytest

from loopline.domain.actions import ACTIONS, InvalidAction, action_profile, check_params, needs_approval


def test_what_a_contact_reads_and_cannot_unread_waits_for_the_owner_even_in_limited_auto() -> None:
    waits = {name for name, profile in ACTIONS.items() if needs_approval(profile, "limited_auto")}
    assert waits == {"send_email", "send_sms", "calendar_invite"}


def test_manual_mode_holds_every_action_that_leaves_loopline_but_never_a_staff_todo() -> None:
    waits = {name for name, profile in ACTIONS.items() if needs_approval(profile, "manual")}
    assert waits == set(ACTIONS) - {"staff_todo"}


def test_params_are_checked_by_name_and_normalised() -> None:
    profile = action_profile("calendar_invite")
    checked = check_params(profile, {"title": "Intro class", "starts_at": "2026-03-05T19:00:00+01:00",
                                     "to": "Sam <SAM@example.com>"})
    assert checked == {"title": "Intro class", "starts_at": "2026-03-05T18:00:00Z", "to": "sam@example.com"}


@pytest.mark.parametrize(("action", "params", "names"), [
    ("send_sms", {"body": "hi"}, "params.to: send_sms needs to"),
    ("send_sms", {"body": "hi", "to": "555"}, "params.to: '555' is no phone number"),
    ("staff_todo", {"title": "Call Sam", "assigned_to": "coach", "due_at": "friday"}, "params.due_at:"),
    ("call_webhook", {"event": "tag", "url": "http://x"}, "params.url: call_webhook takes no 'url'"),
    ("tag_member", {}, "action 'tag_member' is not one of"),
])
def test_a_bad_request_names_the_field_and_what_to_send(action: str, params: dict, names: str) -> None:
    with pytest.raises(InvalidAction, match=names.replace("(", r"\(").replace(".", r"\.")):
        check_params(action_profile(action), params)
