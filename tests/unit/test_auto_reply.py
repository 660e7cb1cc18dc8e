"""Automatic replies are told from people's without a model, in five languages, with the return date they state."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from loopline.domain.auto_reply import AutoReply, recognise, resume_at, return_date
from loopline.domain.stated_dates import dates_in

WRITTEN = date(2026, 6, 1)


def away(body: str, subject: str = "Re: Checking in", auto_submitted: str | None = None) -> AutoReply | None:
    return recognise(subject=subject, body=body, auto_submitted=auto_submitted, written=WRITTEN)


@pytest.mark.parametrize("value", ["auto-replied", "auto-generated", "Auto-Replied; owner-email=ann@example.com",
                                   "auto-notified"])
def test_any_auto_submitted_value_but_no_makes_a_reply_automatic(value: str) -> None:
    found = away("Thanks for your message.", auto_submitted=value)
    assert found is not None and found.sign.startswith("Auto-Submitted: ")


@pytest.mark.parametrize("value", ["no", "No", " no ", "no (a person wrote it)", ""])
def test_auto_submitted_no_is_a_person_writing(value: str) -> None:
    assert away("Sounds good, see you Thursday!", auto_submitted=value) is None


@pytest.mark.parametrize(("subject", "returns_on"), [
    ("Automatic reply: Checking in", None),
    ("Out of Office: Checking in", None),
    ("[Out of the office] Re: Checking in", None),
    ("Autoreply: Checking in", None),
    ("Auto: Checking in", None),
    ("Abwesenheitsnotiz: Checking in", None),
    ("Automatische Antwort: Checking in", None),
    ("Réponse automatique : Checking in", None),
    ("Absence du bureau jusqu'au 10 juin", date(2026, 6, 10)),
    ("Respuesta automática: Checking in", None),
    ("Fuera de la oficina", None),
    ("Afwezigheidsmelding: Checking in", None),
    ("Automatisch antwoord: Checking in", None),
])
def test_an_auto_responders_subject_makes_a_reply_automatic(subject: str, returns_on: date | None) -> None:
    found = away("", subject=subject)
    assert found is not None and found.sign.startswith("subject ")
    assert found.returns_on == returns_on


@pytest.mark.parametrize(("body", "returns_on"), [
    # English
    ("I am out of the office until June 10 with limited access to email.", date(2026, 6, 10)),
    ("I'm currently out of the office and will be back on 10 June.", date(2026, 6, 10)),
    ("I am on annual leave until Wednesday 17th June 2026. For urgent matters call the front desk.", date(2026, 6, 17)),
    ("This is an automatic reply. I will respond when I return.", None),
    ("I'll be away from the office through June 12th.", date(2026, 6, 13)),
    ("I'm on vacation, returning 2026-06-15.", date(2026, 6, 15)),
    ("Out of office: I am travelling for work and will reply when I'm back on the 20th.", date(2026, 6, 20)),
    ("Hi, I'm currently on parental leave until September. Your email will not be forwarded.", date(2026, 9, 1)),
    # German
    ("Ich bin bis zum 10. Juni nicht im Büro.", date(2026, 6, 10)),
    ("Vielen Dank für Ihre Nachricht. Ich bin bis einschließlich 12.06.2026 im Urlaub.", date(2026, 6, 13)),
    ("Dies ist eine automatische Antwort. Ab dem 15. Juni bin ich wieder erreichbar.", date(2026, 6, 15)),
    ("Ich befinde mich im Urlaub. In dringenden Fällen wenden Sie sich an Herrn Maier.", None),
    ("Ich bin derzeit abwesend und ab 20.06. wieder im Büro.", date(2026, 6, 20)),
    ("Danke für Ihre Mail! Ich bin in Elternzeit bis Ende Juli.", date(2026, 8, 1)),
    ("Ich bin bis einschließlich Freitag abwesend. Ihre E-Mail wird nicht weitergeleitet.", None),
    # French
    ("Je suis absente jusqu'au 10 juin inclus.", date(2026, 6, 11)),
    ("Bonjour, je suis actuellement en congés, de retour le 1er juillet.", date(2026, 7, 1)),
    ("Ceci est une réponse automatique. Je serai de retour le 15/06/2026.", date(2026, 6, 15)),
    ("Je serai absent du bureau à partir du 2 juin jusqu'au 9 juin. En cas d'urgence, contactez Paul.", date(2026, 6, 9)),
    ("Message d'absence : je serai de retour le lundi 9 juin.", date(2026, 6, 9)),
    ("Merci pour votre message. Je suis en congé maternité jusqu'en septembre.", date(2026, 9, 1)),
    # Spanish
    ("Estoy fuera de la oficina hasta el 10 de junio.", date(2026, 6, 10)),
    ("Estaré de vacaciones hasta el 15 de junio de 2026. A mi regreso responderé.", date(2026, 6, 15)),
    ("Este es un mensaje automático: estoy ausente, vuelvo el 3 de julio.", date(2026, 7, 3)),
    ("Me encuentro fuera de la oficina con acceso limitado al correo.", None),
    ("Mensaje automático: no estaré disponible hasta el lunes 9 de junio.", date(2026, 6, 9)),
    ("Estoy de baja por maternidad hasta septiembre. Para cualquier consulta, escriba a info@empresa.es.",
     date(2026, 9, 1)),
    # Dutch
    ("Ik ben tot en met 10 juni afwezig.", date(2026, 6, 11)),
    ("Ik ben met vakantie tot 10 juni. In dringende gevallen bel de balie.", date(2026, 6, 10)),
    ("Dit is een automatisch antwoord. Vanaf 15 juni ben ik weer aanwezig.", date(2026, 6, 15)),
    ("Ik ben niet op kantoor en ben terug op 22-06-2026.", date(2026, 6, 22)),
    ("Ik ben momenteel niet op kantoor. Voor dringende zaken kunt u bellen met 020-1234567.", None),
    ("Afwezigheidsbericht: vanaf maandag 9 juni ben ik weer bereikbaar.", date(2026, 6, 9)),
    ("Ik ben met zwangerschapsverlof tot september. Uw e-mail wordt niet doorgestuurd.", date(2026, 9, 1)),
])
def test_an_away_template_is_automatic_and_states_its_return(body: str, returns_on: date | None) -> None:
    found = away(body)
    assert found is not None, body
    assert found.returns_on == returns_on


@pytest.mark.parametrize("body", [
    # The judgment call: a person who happens to be away and answers. Nothing automatic in it; the model reads it.
    "I'm out of the office today but yes I'd love to come back",
    "I'm away next week, but sign me up for Saturday!",
    "I was out of the office, sorry! Is the discount still on?",
    "I'd love to come back, is the discount still on?",
    "Please stop emailing me.",
    "Ich bin nächste Woche im Urlaub, aber danach komme ich gern wieder!",
    "Je suis en vacances mais je reviens bientôt, merci !",
    "Estoy de vacaciones pero sí, me apunto al sábado.",
    "Ik ben op vakantie, maar ik kom daarna graag terug.",
    "Thanks! Back on the mat on 10 June, see you then.",
    "I'm out of patience, this is urgent: stop emailing me.",
    "I'm away from my desk, is this urgent? Call me.",
])
def test_a_person_writing_is_not_an_automatic_reply(body: str) -> None:
    assert away(body) is None


@pytest.mark.parametrize(("text", "expected"), [
    ("until June 10", [date(2026, 6, 10)]),
    ("back on 10 June", [date(2026, 6, 10)]),
    ("bis zum 10. Juni", [date(2026, 6, 10)]),
    ("jusqu'au 10 juin", [date(2026, 6, 10)]),
    ("hasta el 10 de junio", [date(2026, 6, 10)]),
    ("tot 10 juni", [date(2026, 6, 10)]),
    ("on 2026-06-10", [date(2026, 6, 10)]),
    ("on 10/06/2026", [date(2026, 6, 10)]),
    ("am 10.06.2026", [date(2026, 6, 10)]),
    ("bis 10.06.", [date(2026, 6, 10)]),
    ("until 06/30/2026", [date(2026, 6, 30)]),  # a first number above 12 is no month
    ("until May 5", [date(2027, 5, 5)]),  # no year: the next 5 May on or after 1 June 2026
    ("le 1er juillet", [date(2026, 7, 1)]),
    ("June 10th, 2027", [date(2027, 6, 10)]),
    ("at 10.30 today, 2 days ago", []),  # a time and an English "ago" are no dates
    ("until September", [date(2026, 9, 1)]),  # a month alone: its first day
    ("bis Ende Mai", [date(2027, 6, 1)]),  # its end: the next month's first day, the next May being 2027's
    ("you may come back on the 20th", [date(2026, 6, 20)]),  # "may" is never a month alone
])
def test_dates_are_read_in_the_five_languages_as_their_next_occurrence(text: str, expected: list[date]) -> None:
    assert [stated.day for stated in dates_in(text, written=WRITTEN)] == expected


def test_a_date_already_past_states_no_return() -> None:
    assert return_date("I am out of the office until 3 January 2026.", written=WRITTEN) is None


def test_the_cadence_resumes_the_morning_of_the_return_date_in_the_tenants_zone_else_a_week_later() -> None:
    received = datetime(2026, 6, 1, 18, 10, tzinfo=timezone.utc)
    back = AutoReply(sign="subject “Automatic reply”", returns_on=date(2026, 6, 10))
    assert resume_at(back, received_at=received, timezone="Europe/Berlin") == datetime(2026, 6, 10, 7, tzinfo=timezone.utc)
    undated = AutoReply(sign="subject “Automatic reply”", returns_on=None)
    assert resume_at(undated, received_at=received, timezone="UTC") == datetime(2026, 6, 8, 18, 10, tzinfo=timezone.utc)
