"""The app's built-in demo dataset: original text (no benchmark content), in the JSONL format.

One user, Sam, talks to an assistant over seven dated sessions (February-April 2024) about
photography, hiking, cooking and travel, with deliberate distractors. Seven questions cover a
delivery interval across sessions (the analogue of LongMemEval's remote-shutter-release case), a
two-evidence temporal question, a multi-hop question, a knowledge update, a single-hop fact, a
stated preference and an abstention.

The delivery question mirrors the real case: both evidence turns are relevant, but the order turn
shares four words with the question while the arrival turn ("It finally arrived on March 14th!
The new strap's ...") shares one, and a dozen turns about straps, cameras and orders outrank it.
A BM25 top-10 over the scope holds the order but not the arrival (``tests/test_ingest_demo.py``
checks this); deeper, budgeted text access reaches it (rank ~20), as BFR does in the paper.

``write_demo(path)`` writes the JSONL; ``demo_file()`` keeps ``data/demo.jsonl`` (not in git: this
module is its source) written and current; ``ensure_demo_store(db_path)`` opens a store and ingests
it as dataset ``demo`` when missing or changed, and loads ``data/demo_llm_cache.json`` when present:
the local model's decompositions of the demo's questions, recorded by ``bench/quality/bench_decompose.py
--local --record`` as LLM cache rows keyed like every other call (``load_recorded``), so an offline
visitor sees what a model asks for (``roles.decomposer.recorded``).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from bfr_core.ingest import ingest
from bfr_core.ingest.common import sha256_file
from bfr_core.llm.cache import DDL
from bfr_core.progress import Progress
from bfr_core.store import Store

DATASET_ID = "demo"
SCOPE = "sam"
USER, ASSISTANT = "Sam", "assistant"
DEMO_PATH = Path(__file__).resolve().parents[2] / "data" / "demo.jsonl"
RECORDED_PATH = DEMO_PATH.with_name("demo_llm_cache.json")
RECORDED_COLUMNS = ("provider", "model", "temperature", "prompt_sha256", "response", "tokens_in", "tokens_out",
                    "created")

# A turn is its text, or (key, text) when a question names it as gold. Speakers alternate,
# starting with Sam.
DemoTurn = str | tuple[str, str]

SESSIONS: tuple[tuple[str, str, tuple[DemoTurn, ...]], ...] = (
    ("s1", "2024-02-20T19:05", (
        "Hi! I finally bought my first mirrorless camera last weekend and I'm a bit overwhelmed by all the settings.",
        "Congratulations! A good way in is to pick one mode, like aperture priority, and learn what the "
        "aperture ring does before touching anything else.",
        ("lens50", "It came with a kit zoom, but I picked up a used 50mm prime too, and that's the lens I "
                   "shoot with most."),
        "A 50mm is a great teacher: it makes you move your feet to frame a shot, and it handles low light well.",
        "The strap that came in the box is awful though. It's thin, scratchy and it digs into my neck after an hour.",
        "Stock straps are often an afterthought. Many people switch to a wider padded strap or a sling style "
        "that sits across the body.",
        "What about wrist straps? I've seen street photographers use them.",
        "A wrist strap keeps the camera ready in your hand and weighs almost nothing, but it's less comfortable "
        "on long walks. For hiking, a sling or shoulder strap is usually easier.",
        "Makes sense. I want to bring the camera on hikes, so comfort matters.",
        "Then look for a strap with quick-release connectors, so you can take it off when the camera goes on "
        "a tripod.",
        "I don't own a tripod yet. Do I need one right away?",
        "Not right away. For sunsets and night shots it helps a lot, but you could borrow one first and see "
        "whether you use it.",
        "Good idea. What's a simple exercise for this week?",
        "Try shooting only at f/2 for a few days and notice how the background blurs. Then shoot the same "
        "scene at f/8 and compare.",
        "Fun. My apartment has nice window light in the morning, I'll start there.",
        "Window light is perfect for that. Keep the light to one side of your subject to give it more shape.",
        "Thanks, I'll report back!",
        "Enjoy it, and don't worry about the settings too much at first.",
    )),
    ("s2", "2024-03-03T09:15", (
        ("order", "Good morning! Quick update: I ordered a new camera strap this morning, March 3rd. It's a "
                  "padded leather one from a small shop in Portugal."),
        "Nice choice, leather softens with use. Did they give you a delivery estimate?",
        "They said it ships within a week, so who knows. Another question: I signed up for a pasta-making "
        "class later this month.",
        "That sounds fun! Fresh pasta is mostly about the dough: flour, eggs and patience.",
        "Should I practise at home before the class?",
        "You could try one batch of simple egg dough, so you know how it should feel: smooth and a little "
        "tacky, not sticky.",
        "I ordered a bag of 00 flour online too, it should come in a couple of days.",
        "00 flour gives a silky texture. All-purpose flour works too if the bag is late.",
        "How long do I knead it?",
        "About eight to ten minutes by hand, then let it rest, wrapped, for thirty minutes so the gluten relaxes.",
        "And for cooking in general, what oil do people use for high heat? My olive oil smokes a lot.",
        "For searing, oils with a high smoke point such as avocado, peanut or refined canola work better than "
        "extra-virgin olive oil.",
        ("oil", "I've been using avocado oil for searing since last year and I much prefer it, I just "
                "wondered if I was missing something."),
        "You're not missing much. Keep the olive oil for finishing and dressings.",
        "Back to photos for a second: the old strap is already in a drawer, so I'm using the camera without "
        "one until the new one comes.",
        "Just be careful with the camera in your hands, especially near water or on trails.",
        "Ha, yes. I'll keep it in the bag when I'm not shooting.",
        "Smart. Enjoy your Sunday!",
    )),
    ("s3", "2024-03-09T18:40", (
        ("hike", "I did my first sunrise hike today! I went up Mount Tam and reached the summit just before "
                 "seven."),
        "That's a great start to the day. How was the light?",
        ("tripod", "Incredible: fog in the valleys and a pink sky. My friend Priya lent me her tripod for it, "
                   "which made the long exposures possible."),
        "Borrowing is a smart way to test gear. Did the tripod feel heavy on the climb?",
        "A bit. It's an aluminium one, maybe two kilos. I tied it to the side of my backpack.",
        "Carbon fibre models are lighter, but they cost a lot more. Worth it only if you use one every week.",
        "The trail was steep at the start. My calves are sore now.",
        "Stretching tonight and a short easy walk tomorrow will help with the soreness.",
        "Carrying the camera without a strap was annoying on the trail, I kept switching hands.",
        "A temporary fix is a simple cord through the strap lug, so at least you can clip it to your bag.",
        "I should have thought of that. Next time.",
        "What did you shoot with, the 50mm?",
        "Yes, mostly. For the wide view I used the kit zoom at 18mm.",
        "Good mix. Check your horizons on the wide shots; they tend to tilt on uneven ground.",
        "Priya wants to come on the next hike. She knows a trail to a waterfall.",
        "Waterfalls are great in spring after the rain. Bring a cloth for the spray on your lens.",
        "Noted! Now I need a nap.",
        "Well earned. Enjoy the rest of your Saturday.",
    )),
    ("s4", "2024-03-15T20:10", (
        "Remember the package I was waiting for from Portugal?",
        "The leather one? Did it make it?",
        ("arrival", "It finally arrived on March 14th! The new strap's leather is softer than I expected "
                    "and the stitching looks great."),
        "Lovely. Give it a few weeks of use and it will mould to your shoulder.",
        ("risotto", "Also, I had Priya over for dinner last night as a thank-you. I made a mushroom risotto."),
        "A classic. Did you use arborio rice?",
        "Yes, and homemade stock. The stirring went on forever but it was worth it.",
        "Risotto rewards patience. Adding warm stock a ladle at a time is the whole trick.",
        "I seared the mushrooms separately in avocado oil so they'd brown instead of steaming.",
        "That's exactly right; crowding the pan is what makes mushrooms soggy.",
        "Priya said it was better than the restaurant down the street, so I'm calling it a win.",
        "High praise! Did you take any photos of the dish?",
        "A few with the 50mm by the window, but food photography is harder than it looks.",
        "Try shooting from slightly above, at about 45 degrees, and use a white card to bounce light into "
        "the shadows.",
        "I'll try that. By the way, how should I look after the leather?",
        "Wipe it with a dry cloth and use a little leather conditioner every few months. Avoid long soaks in "
        "the rain.",
        "Perfect, thanks!",
        "Enjoy the new setup.",
    )),
    ("s5", "2024-03-27T21:30", (
        ("pasta", "I took the pasta-making class tonight! We made tagliatelle and ravioli from scratch."),
        "How fun! How did your dough turn out?",
        "Too dry at first, but the teacher showed me how to add water with wet hands.",
        "That's a great trick; a tiny bit of water goes a long way.",
        "The ravioli were a mess but tasty. I want to try again at home this weekend.",
        "Ravioli get easier with practice. Press the air out around the filling before sealing them.",
        ("lisbon", "Different topic: I'm planning a trip for May. I booked flights to Lisbon for May 18th."),
        "Lisbon in May is lovely. Are you thinking of day trips as well?",
        "Maybe Sintra, and I'd love to hike part of the coast near Cascais.",
        "The coastal paths there are beautiful. Sintra gets crowded, so go early on a weekday.",
        "I'm going to bring the camera of course. Should I bring the 50mm or the zoom?",
        "For a city trip a small prime is easy to carry. Many travellers pair it with one wider lens for "
        "streets and views.",
        "My luggage allowance is small, so I need to pack light.",
        "Roll your clothes, wear your heaviest shoes on the plane, and leave the tripod at home unless you "
        "plan night shots.",
        "Priya wants her tripod back anyway, ha.",
        "Then it's settled. A small table-top tripod can be enough for travel.",
        "Good tip. I'll think about it.",
        "Sleep well after all that kneading!",
    )),
    ("s6", "2024-04-12T17:45", (
        "It's been a while! I've been shooting a lot with a different lens lately.",
        "Oh? What changed?",
        ("lens35", "I bought a 35mm prime two weeks ago and it's now the lens I use most. The 50mm feels too "
                   "tight indoors."),
        "A 35mm is a great everyday focal length; it shows the context around your subject.",
        "I also ordered a small camera bag, but the shop says it will take ten days to ship.",
        "Ten days is long for a bag. Do they have a local store?",
        "They don't. I'll live with it.",
        "In the meantime, a padded insert in a regular backpack works fine.",
        "The leather strap is great by the way, it's really soft now.",
        "Glad to hear it has held up.",
        "I'm thinking of selling the kit zoom to pay for the new lens.",
        "If you rarely use it, that makes sense. Keep it until after your trip, though, in case you need "
        "the range.",
        "Fair point. I'll wait until June.",
        "Meanwhile, try a week of shooting only the 35mm to learn how it frames things.",
        "I've basically been doing that already!",
        "Then you're ahead of the plan.",
        "Also, is it worth getting a second battery?",
        "Yes, mirrorless bodies drain batteries quickly. A spare is the cheapest upgrade you can make.",
    )),
    ("s7", "2024-04-27T10:20", (
        "Three weeks until Lisbon! I'm making a packing list.",
        "Exciting. What's on it so far?",
        "Walking shoes, a light rain jacket, the camera with the 35mm, and a spare battery.",
        "Sounds compact. Consider a small power bank too, for long days out.",
        "Priya and I did the waterfall hike last weekend, as a test for the trip.",
        "How did it go?",
        "Great, though muddy. My new hiking boots did fine on the wet rocks.",
        "Nice. Breaking in boots before a trip avoids blisters.",
        "I ordered a new camera strap for Priya as a birthday present, the same model as mine.",
        "That's thoughtful. She'll appreciate it on her hikes.",
        "For the flight, can I put the camera battery in my checked luggage?",
        "Spare lithium batteries usually have to travel in the cabin, so keep them in your carry-on.",
        "Good to know. I'll pack them in my backpack.",
        "And keep the camera in your carry-on too, so it doesn't get knocked around.",
        "Any food I should try in Lisbon?",
        "Pastéis de nata, grilled sardines and bifana sandwiches are the classics.",
        "Now I'm hungry. Thanks for the help!",
        "Have a wonderful trip, and take lots of photos.",
    )),
)

QUESTION_DATE = "2024-04-30T12:00"

# (question_id, qtype, question, answer, gold keys, is_abstention)
QUESTIONS: tuple[tuple[str, str, str, str, tuple[str, ...], bool], ...] = (
    ("q1", "temporal-reasoning", "How many days did it take for my new camera strap to arrive after I ordered it?",
     "11 days (ordered on March 3rd, it arrived on March 14th).", ("order", "arrival"), False),
    ("q2", "temporal-reasoning", "How many days passed between my sunrise hike on Mount Tam and my pasta-making class?",
     "18 days (March 9th to March 27th).", ("hike", "pasta"), False),
    ("q3", "multi-hop", "What did I cook for the friend who lent me her tripod?",
     "A mushroom risotto (for Priya).", ("tripod", "risotto"), False),
    ("q4", "knowledge-update", "Which lens do I use most these days?",
     "The 35mm prime (earlier it was the 50mm).", ("lens50", "lens35"), False),
    ("q5", "single-hop", "Which city am I flying to in May?", "Lisbon.", ("lisbon",), False),
    ("q6", "single-session-preference", "Which oil do I prefer for searing?", "Avocado oil.", ("oil",), False),
    ("q7", "single-hop", "What is my dog's name?",
     "Not mentioned: Sam never talks about a dog.", (), True),
)


def _turn_records(sid: str, turns: tuple[DemoTurn, ...]) -> tuple[list[dict[str, str]], dict[str, str]]:
    """JSONL turn objects and the gold key -> turn id map of one session."""
    out, keys = [], {}
    for i, turn in enumerate(turns):
        key, text = turn if isinstance(turn, tuple) else (None, turn)
        tid = f"{sid}_{i + 1}"
        out.append({"turn_id": tid, "speaker": USER if i % 2 == 0 else ASSISTANT, "text": text})
        if key:
            keys[key] = tid
    return out, keys


def demo_records() -> list[dict[str, Any]]:
    """The dataset as JSONL objects: sessions first, then questions."""
    records: list[dict[str, Any]] = []
    gold_ids: dict[str, str] = {}
    for sid, date, turns in SESSIONS:
        turn_objs, keys = _turn_records(sid, turns)
        gold_ids.update(keys)
        records.append({"type": "session", "session_id": sid, "date": date, "scope": SCOPE, "turns": turn_objs})
    for qid, qtype, question, answer, gold, abstention in QUESTIONS:
        rec: dict[str, Any] = {
            "type": "question", "question_id": qid, "scope": SCOPE, "question": question, "answer": answer,
            "qtype": qtype, "date": QUESTION_DATE, "gold": [gold_ids[k] for k in gold],
        }
        if abstention:
            rec["is_abstention"] = True
        records.append(rec)
    return records


def demo_text() -> str:
    """The demo dataset as JSONL text (UTF-8, one record per line, deterministic)."""
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in demo_records()) + "\n"


def write_demo(path: str | Path = DEMO_PATH) -> Path:
    """Write the demo dataset as JSONL to ``path``."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(demo_text(), encoding="utf-8")
    return out


def demo_file() -> Path:
    """``data/demo.jsonl``, written now when it is missing or differs from this module's records;
    a file in a fresh temporary directory when the data folder is not writable (an installed package)."""
    text = demo_text()
    try:
        if not DEMO_PATH.is_file() or DEMO_PATH.read_text(encoding="utf-8") != text:
            write_demo(DEMO_PATH)
        return DEMO_PATH
    except OSError:
        return write_demo(Path(tempfile.mkdtemp(prefix="bfr-demo-")) / "demo.jsonl")


def ensure_demo_store(
    db_path: str | Path, *, embed: bool = True, progress: Progress | None = None
) -> Store:
    """Open (or create) the store at ``db_path`` with the demo dataset in it.

    Cheap when the dataset is already there from the same demo file (one hash of a small file);
    re-ingests with ``replace`` when the demo records changed (see :func:`demo_file`).
    """
    store = Store(db_path)
    source = demo_file()
    existing = store.dataset(DATASET_ID)
    if existing is None or existing["source_sha256"] != sha256_file(source):
        ingest(store, "jsonl", source, name=DATASET_ID, replace=existing is not None, embed=embed,
               progress=progress)
    load_recorded(store)
    return store


def load_recorded(store: Store, path: str | Path = RECORDED_PATH) -> int:
    """Insert the recorded LLM cache rows of ``path`` that ``store`` lacks; the number inserted (0 for a
    missing file or a read-only store). A malformed file raises ValueError naming it."""
    path = Path(path)
    if not path.is_file() or store.read_only:
        return 0
    try:
        rows = [tuple(e[c] for c in RECORDED_COLUMNS) for e in json.loads(path.read_text("utf-8"))["entries"]]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a recorded LLM cache file ({exc})") from None
    store.ensure(DDL)
    cur = store.cursor()
    before = cur.execute("SELECT count(*) FROM llm_cache").fetchone()[0]
    cur.executemany(f"INSERT OR IGNORE INTO llm_cache ({', '.join(RECORDED_COLUMNS)}) "
                    f"VALUES ({', '.join('?' * len(RECORDED_COLUMNS))})", rows)
    return cur.execute("SELECT count(*) FROM llm_cache").fetchone()[0] - before
