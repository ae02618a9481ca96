import pytest

from bot import humanizer
from bot.routing.types import Courtesy
from bot.smalltalk import REPLIES, small_talk_reply


@pytest.mark.parametrize("language", ["es", "en"])
@pytest.mark.parametrize("courtesy", [Courtesy.GREETING, Courtesy.THANKS, Courtesy.FAREWELL])
def test_every_reply_passes_the_humanizer(language, courtesy):
    reply = small_talk_reply(courtesy, language, after_bot_answer=False)
    assert reply == REPLIES[language][courtesy]
    assert humanizer.check(reply, language=language).ok


def test_a_bare_acknowledgement_is_silent_only_after_a_bot_answer():
    assert small_talk_reply(Courtesy.ACK, "es", after_bot_answer=True) is None
    assert small_talk_reply(Courtesy.ACK, "es", after_bot_answer=False) == REPLIES["es"][Courtesy.GREETING]
    assert small_talk_reply(Courtesy.THANKS, "en", after_bot_answer=True) == REPLIES["en"][Courtesy.THANKS]


def test_another_language_gets_spanish_and_unknown_small_talk_gets_thanks():
    assert small_talk_reply(None, "pt", after_bot_answer=False) == REPLIES["es"][Courtesy.THANKS]
