"""Whether a contact's reply asks to hear no more (seed 002 §22.3): a rule, never the model.

The seed's keywords and their German, French, Spanish and Dutch counterparts are matched as whole
words, ignoring case and accents, in the reply's own lines (quoted lines and the quoted message
below "… wrote:" are not the contact's words). Two of the seed's keywords are narrowed so that a
reply about something else is not read as a STOP: "stop" counts only as the whole first sentence
("STOP", "Stop please", "STOP. This is too much"; not "don't stop the discount" nor "I stopped by"),
and "remove me" / "take me off" only from a list or the emails, not from a class's waitlist. A phrase
right after a negation ("please don't unsubscribe me", "I don't want you to stop emailing me") is
not an opt-out either.
"""

from __future__ import annotations

import re
import unicodedata

BARE_WORDS = frozenset({
    "stop", "stopall", "unsubscribe", "opt out", "opt-out", "remove me", "take me off",
    "stopp", "abmelden", "austragen", "abbestellen",
    "arret", "arrete", "arretez", "desabonner", "desinscrire", "desabonnement", "desinscription",
    "basta", "baja", "alto", "para",
    "afmelden", "uitschrijven",
})
"""Words that are an opt-out when they are the whole first sentence of a reply (SMS-style "STOP")."""

POLITE = re.compile(
    r"\b(?:please|pls|plz|now|bitte|sofort|svp|s'il vous plait|merci|por favor|ya|alsjeblieft|aub|graag|a\.u\.b)\b"
)
"""Words a bare keyword may carry without ceasing to be bare ("Stop please", "STOP svp")."""

_MAIL = r"(?:e-?mails?|mails?|emails?|messages?|newsletters?|texts?)"
_LIST = r"(?:(?:mailing |email |e-mail |contact |distribution )?lists?|" + _MAIL + r"|database|contacts)"

PHRASES: tuple[str, ...] = (
    # English: the seed's list, then the usual ways of saying it
    r"unsubscrib\w*",
    r"opt(?:ing|ed)?[ -]?out",
    rf"remove (?:me|my (?:e-?mail|email address|address|name|details|data))(?: from (?:\w+ ){{0,3}}{_LIST})?\b(?!\s*from)",
    rf"take me off (?:\w+ ){{0,2}}{_LIST}",
    r"(?:don'?t|do not|never) (?:e-?mail|contact)(?: me| us)?\b",
    r"(?:don'?t|do not|never) (?:message|text|write to|bother|spam|reach out to|call) (?:me|us)\b",
    rf"(?:don'?t|do not|never) send (?:me|us) (?:any )?(?:more |further |these |your )?{_MAIL}",
    r"(?:stop|quit|cease|end) (?:e-?mailing|contacting|messaging|texting|writing to|sending|spamming|bothering|bugging|harassing)",
    r"leave me alone",
    rf"no (?:more|further) {_MAIL}",
    rf"(?:don'?t|do not) want (?:any |to get |to receive )?(?:more |further |your |these |any )?{_MAIL}",
    r"(?:don'?t|do not|never) want to hear from (?:you|this|your)",
    r"(?:e-?mail|contact|message|write to) me (?:no more|never again)",
    r"delete my (?:e-?mail|email address|address|data|details|contact|information|info)",
    # German
    r"ab(?:ge)?meld\w*|melde?n? (?:sie |du )?mich (?:\w+ ){0,3}ab\b",
    r"abbestell\w*",
    r"austragen|ausgetragen|trage?n? (?:sie )?mich (?:\w+ ){0,4}aus\b",
    r"keine (?:weiteren |mehr )?(?:e-?mails|mails|nachrichten|newsletter|werbung|post) mehr",
    r"(?:will|mochte|wollen|wunsche) keine (?:weiteren |mehr )?(?:e-?mails|mails|nachrichten|newsletter|werbung)",
    r"(?:kontaktier|schreib|mail|belastig|anschreib|nerv)\w* (?:sie |ihr |du )?(?:mich|mir) (?:bitte )?nicht mehr",
    r"nicht mehr (?:zu )?(?:kontaktieren|anschreiben|schreiben|mailen|anmailen|belastigen|nerven)",
    r"lass\w* (?:sie |ihr )?mich (?:\w+ )?in ruhe",
    r"(?:entfern|streich|losch|nehm)\w* (?:sie |ihr )?(?:mich|meine (?:e-?mail-?adresse|adresse|daten)) (?:\w+ ){0,3}(?:aus|von) (?:\w+ )?(?:liste|verteiler|mailingliste|newsletter|datenbank|kartei)",
    r"hor\w* (?:sie |ihr )?(?:bitte )?auf,? mir",
    r"widersprech\w*|widerspreche|werbewiderspruch",
    # French
    r"desabonn\w*|desinscri\w*",
    r"ne (?:me |m')?(?:contact|ecri|envoy|sollicit|relanc|spamm|harcel)\w* plus",
    r"ne plus (?:me |m')(?:contacter|ecrire|envoyer|relancer|solliciter|deranger)",
    r"supprim\w* (?:mes|mon) (?:coordonnees|donnees|adresse|e-?mail|contact)",
    r"arret\w* (?:de |d')(?:m'|me )?(?:ecrire|envoyer|contacter|spammer|relancer|harceler|solliciter)",
    r"lais\w*[ -]moi tranquille|(?:fou|fich)\w*[ -]moi la paix",
    rf"(?:retir|supprim|enlev|ray)\w*[ -]moi (?:de|des|du) (?:votre |vos |la |cette |ces |votre liste de )?(?:liste|listes|mailing|fichier|base|envois|{_MAIL}|courriels)",
    r"ne (?:veux|souhaite|desire)\w* plus (?:recevoir|de |d'|vos|aucun|etre contacte)",
    r"^plus de (?:e-?mails|mails|courriels|messages)|plus jamais de (?:e-?mails|mails|courriels|messages)",
    # Spanish
    r"(?:dar|darme|darnos|den|denme) de baja (?:de |del )(?:la |las |los |su |sus |esta |vuestra )?(?:lista|listas|correos?|e-?mails?|boletin|newsletter|mailing|comunicaciones|envios|mensajes)",
    r"desuscrib\w*|desuscripcion|(?:anular|cancelar) (?:mi |la )?suscripcion",
    r"me (?:borr|elimin|quit|sac)\w* de (?:la |su |sus |vuestra |esta )?(?:lista|listas|base de datos)",
    r"no me (?:escrib|contact|envi|mand|molest|llam)\w* mas",
    r"dej\w* de (?:escribirme|enviarme|contactarme|mandarme|molestarme|escribir|enviar|mandar)",
    r"dej\w*me en paz",
    r"(?:elimin|quit|borr|sac)\w*me de (?:la |su |sus |vuestra |esta |vuestras )?(?:lista|listas|base de datos|correos|envios)",
    r"no (?:quiero|deseo) recibir (?:mas|ningun|sus|estos|vuestros|correos|e-?mails|mensajes)",
    r"no mas (?:correos|e-?mails|mensajes|mails)",
    # Dutch
    r"geen contact meer",
    r"af(?:ge)?meld\w*|meld (?:mij|me) (?:\w+ ){0,2}af\b",
    r"uitschrijv\w*|uitgeschreven|schrijf (?:mij|me) (?:\w+ ){0,2}uit\b",
    r"geen (?:e-?mails|mails|berichten|nieuwsbrieven|nieuwsbrief|reclame) meer|wil geen (?:e-?mails|mails|berichten|nieuwsbrief)",
    r"niet meer (?:te )?(?:mailen|e-?mailen|contacteren|benaderen|sturen|lastigvallen)",
    r"(?:mail|e-?mail|contacteer|benader|stuur)\w* (?:mij|me) (?:\w+ )?niet meer",
    r"laat (?:mij|me) (?:\w+ )?met rust",
    r"(?:haal|verwijder)\w* (?:mij|me|mijn (?:e-?mailadres|adres|gegevens)) (?:\w+ ){0,2}(?:van|uit) (?:de |jullie |uw |je |het |deze )?(?:lijst|mailinglijst|verzendlijst|bestand|nieuwsbrief|database)",
    r"(?:stop|hou|houd)\w* (?:op )?met (?:me |mij )?(?:te )?(?:mailen|e-?mailen|sturen|contacteren|berichten)",
)
"""Each pattern is written in lower case without accents, as replies are read."""

NEGATION = re.compile(
    r"(?:\b(?:don'?t|do not|didn'?t|did not|doesn'?t|does not|never|no|no need to|won'?t|will not|not|nicht|niet|pas|no quiero|no deseo)"
    r"(?: (?:want|need|mean|ask|wish|plan|like|wollen|will|mochte|wil|veux|souhaite|quiero|deseo))?"
    r"(?: (?:you|u|me|m'|sie|ihr|jullie|je|te|a|zu|to))*"
    r"(?: (?:to|zu|te|de))?\s*)$"
)
"""A negation that ends right where a phrase starts takes the phrase back ("please don't unsubscribe me")."""

_COMPILED = tuple(re.compile(rf"(?<!\w){pattern}", re.MULTILINE) for pattern in PHRASES)
_QUOTE_HEADER = re.compile(
    r"^(?:on|am|le|el|op) .{0,200}?(?:wrote|schrieb|a ecrit|escribio|schreef)\s*:?\s*$|^-{2,} ?original message ?-{2,}",
    re.MULTILINE,
)
_NOT_A_WORD = re.compile(r"[^\w' -]+")
_SENTENCE = re.compile(r"[\n.!;¡]+")


def fold(text: str) -> str:
    """Lower case, accents dropped, typographic apostrophes straightened, spaces collapsed per line."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).replace("’", "'").replace("‘", "'")
    return "\n".join(" ".join(line.split()) for line in plain.splitlines())


def own_words(text: str) -> str:
    """The reply without what it quotes: lines starting with ">" and everything from an "On … wrote:" line on."""
    folded = fold(text)
    header = _QUOTE_HEADER.search(folded)
    if header:
        folded = folded[: header.start()]
    return "\n".join(line for line in folded.splitlines() if not line.startswith(">"))


def opt_out_phrase(text: str) -> str | None:
    """The words of `text` that ask to hear no more (as folded), or None when it does not ask that."""
    words = own_words(text)
    first = next((part for part in _SENTENCE.split(words) if part.strip()), "")
    bare = " ".join(POLITE.sub(" ", _NOT_A_WORD.sub(" ", first)).split())
    if bare in BARE_WORDS:
        return bare
    for pattern in _COMPILED:
        for found in pattern.finditer(words):
            if not NEGATION.search(words[: found.start()].rsplit("\n", 1)[-1]):
                return found.group(0)
    return None

