"""The opt-out rule (seed 002 §22.3): the seed's keywords and their translations, a bare STOP, and nothing else."""

from __future__ import annotations

import pytest

from loopline.domain.opt_out import BARE_WORDS, opt_out_phrase


@pytest.mark.parametrize("reply", [
    "STOP", "stop", "Stop.", "STOP please", "Stop!!\n\nSent from my phone", "unsubscribe", "STOPP", "Arrêt", "BAJA",
    "Please stop emailing me.", "opt out", "Opt-out", "remove me", "Remove me from your list please",
    "don't email me", "dont contact me", "leave me alone", "take me off your mailing list", "No more emails!",
    "Bitte abmelden", "Ich möchte keine E-Mails mehr", "Désabonnez-moi", "Ne m’écrivez plus",
    "Dejen de escribirme", "No me envíen más correos", "Schrijf me uit", "Ik wil geen mails meer",
    "DÉSINSCRIRE", "desinscrire",
    "unsubscribe gym_1 bob@x.com",  # the subject of the List-Unsubscribe mailto every email carries
])
def test_the_seeds_keywords_and_their_translations_are_an_opt_out_whatever_the_case(reply: str) -> None:
    assert opt_out_phrase(reply) is not None


@pytest.mark.parametrize("reply", [
    "Don't stop the discount, I'll be there Monday!",
    "I stopped by yesterday but you were closed.",
    "Can you remove me from the 6am waitlist?",
    "Take me off the waitlist for Saturday and book me for Sunday.",
    "Please don't unsubscribe me, I love the newsletter.",
    "I don't want you to stop emailing me.",
    "I didn't unsubscribe, so why did the emails stop?",
    "Ich habe mich für Donnerstag angemeldet.",
    "Inscrivez-moi pour jeudi.",
    "Surtout n'arrêtez pas la promo !",
    "Estoy de baja por maternidad hasta septiembre.",
    "No dejen de enviar las ofertas.",
    "Stop vooral niet met de korting.",
    "Schrijf me maar in voor donderdag.",
    "Bus stop is right outside, see you at 6.",
    "",
])
def test_a_reply_about_something_else_is_not_an_opt_out(reply: str) -> None:
    assert opt_out_phrase(reply) is None


def test_stop_counts_only_as_the_replys_whole_first_sentence() -> None:
    assert opt_out_phrase("Stop\nI mean it.") == "stop"
    assert opt_out_phrase("STOP. This is the third email this week.") == "stop"
    assert opt_out_phrase("Great class. Stop by the desk for the form?") is None


def test_quoted_text_is_not_the_contacts_words() -> None:
    quoted = "See you Monday!\n\nOn Tue, 3 Mar 2026 at 10:00, Gym <hi@gym.com> wrote:\n> Unsubscribe at any time."
    assert opt_out_phrase(quoted) is None
    assert opt_out_phrase("Sounds good\n> stop emailing me") is None
    assert opt_out_phrase("> Hi Sam,\n\nStop emailing me.") == "stop emailing"


def test_every_bare_word_is_written_as_replies_are_read() -> None:
    assert all(word == word.lower() and word.isascii() for word in BARE_WORDS)
