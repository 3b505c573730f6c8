"""A deterministic synthetic evaluation suite with planted, labelled evidence.

`generate(seed, size)` returns a `Dataset` (tools/evalkit/dataset.py) of several
users, English (`syn-en-NN`) and Chinese (`syn-zh-NN`). Each user is one conversation
between two named speakers over `SESSIONS_PER_USER` sessions spread over several
weeks of 2023; each session has 8-20 turns that alternate speaker A (role `user`) and
speaker B (role `assistant`), and every turn starts with its speaker label
("Alice: ..." / "李雷：..."). Most turns are templated small talk; among them sit the
planted facts that questions ask about, distractor turns that mention the same
entities without the asked fact, and filler turns with (labelled) time expressions.

Ids: user "syn-en-01", session "syn-en-01/s03", turn "S3:7" (session 3, turn 7, both
1-based), question "syn-en-01/q007". Every turn carries its session's `timestamp_ms`
(Unix ms, UTC).

Question categories (exact strings) and their truth:

- `single-hop`: one turn states the fact; gold = [that turn].
- `paraphrase`: the same fact asked without the evidence's key words;
  labels = {"plain_qid": the single-hop question's qid}.
- `multi-session`: the answer needs two turns from two different sessions (e.g. a trip
  with a friend in one session, the hotel for that trip in a later one); gold = both.
- `knowledge-update`: an old value in an earlier session, an explicit correction in a
  later one ("moved to", "postponed to", "switched", "instead", "changed to"; 搬到,
  推迟到, 改成, 换成, 不再, 其实); the question asks for the current value.
  gold = [new, old]; labels = {"new": [new turn], "old": [old turn]}.
- `temporal-relative`: the turn dates an event with a relative expression; the question
  asks when; answer = the resolved ISO date, or "START/END" (ISO 8601 interval).
- `temporal-absolute`: the turn dates an event absolutely, in varied forms ("on 8 May
  2023", "on May 8th", "on 2023-05-08", "on 5/18/2023" (M/D/YYYY, the day always
  > 12 so it cannot be read as D/M), "in March", "in 2022"; 2023年5月8日, 5月8日那天,
  2023-05-08那天, 3月份, 2022年). A date without a year is in the session's year and
  before the session. The question asks when (answer ISO date or interval) or, for a
  single day, what happened on it (answer the event).
- `multiple-choice`: `options` holds 3-5 strings, exactly one right (at a seeded
  position, `answer` is it); the wrong options are mentioned in non-gold turns.
- `unanswerable`: asks an attribute never stated of an entity that is mentioned;
  gold = every turn that mentions the entity; labels = {"unanswerable": true}.

Harder groups (tools/evalkit/synthetic_hard.py: more `paraphrase` cases, `typo`,
`period`, `update-cue`) live in users of their own, numbered from HARD_FIRST
(`syn-en-51`, `syn-zh-51`) and appended after the users above, whose questions and
figures are therefore unchanged by them. Their sessions spread over several months.

Relative time expressions (`Conversation.relative_times`): every relative expression
in the text, in evidence and in filler, is listed as {"turn_id", "expression" (exactly
as in the text), "start", "end"}, resolved against the turn's session date (UTC):

- yesterday / 昨天 = date - 1; the day before yesterday / 前天 = date - 2;
  N days ago / N天前 = date - N (English N in digits or words: "2 days ago", "three days
  ago"); tomorrow / 明天 = date + 1; the day after tomorrow /
  后天 = date + 2; in N days / N天后 = date + N (single days: start == end).
- Weeks are ISO weeks, Monday..Sunday: last week / 上周 = the previous ISO week;
  N weeks ago = the ISO week N weeks before; next week / 下周 = the following ISO week;
  this weekend / 这周末 = Saturday..Sunday of the session date's ISO week (only used
  when the session falls Monday..Thursday).
- last month / 上个月, next month / 下个月 = first..last day of that calendar month;
  last year / 去年 = Jan 1..Dec 31 of the previous year.
- last <weekday> = the latest such weekday strictly before the session date;
  next <weekday> = the earliest such weekday strictly after it.
  上周X / 下周X = weekday X of the previous / following ISO week (the Chinese words
  name the week, so they follow the week convention, unlike the English ones).
- Vague expressions (recently, the other day, a while ago, not long ago, some time
  ago; 最近, 前几天, 前阵子, 不久前) appear in some filler turns with start = end =
  null: a resolver must leave them unresolved.

Filler text never contains any other time expression, so the list is complete.

Determinism: each user draws from its own `random.Random(seed * 100003 + number)`
(en users numbered 1.., zh users 501..), never the global generator, never a set or
hash(); so the output is byte-identical on every run and every PYTHONHASHSEED, and a
`small` suite's users are the first users of the `medium` one.
"""
from __future__ import annotations

import datetime
import json
import random
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tools.evalkit import synthetic_hard
from tools.evalkit.dataset import Conversation, Dataset, Question, Session, Turn, to_json

# -- sizes and per-user plan ---------------------------------------------------------

SIZES = {"small": {"en": 4, "zh": 3}, "medium": {"en": 16, "zh": 12}}
# Users of the harder groups (tools/evalkit/synthetic_hard.py), numbered from HARD_FIRST, after the others.
HARD_SIZES = {"small": {"en": 1, "zh": 1}, "medium": {"en": 4, "zh": 4}}
HARD_FIRST = 51
HARD_GAP_DAYS = (6, 18)  # sessions spread over several months, so that a month or a season leaves some out
HARD_LAST_START_DAY = datetime.date(2023, 3, 1)
SESSIONS_PER_USER = 12
MIN_TURNS, MAX_TURNS = 8, 20
FIRST_DAY, LAST_START_DAY = datetime.date(2023, 1, 9), datetime.date(2023, 7, 15)
GAP_DAYS = (2, 7)
PLAN = {
    "single-hop": 5, "paraphrase": 2, "multi-session": 3, "knowledge-update": 4,
    "temporal-relative": 5, "temporal-absolute": 4, "multiple-choice": 3, "unanswerable": 3,
}
FILLER_RELATIVE = (2, 3)  # labelled relative expressions in filler turns, per user
FILLER_VAGUE = 2  # unresolvable expressions in filler turns, per user
PAST_SHARE = 0.65  # share of temporal-relative events in the past (the rest are planned)
REACTION_SHARE = 0.5  # how often a planted fact gets a reply that mentions its entity

# -- word lists ----------------------------------------------------------------------

WORDS: Dict[str, Dict[str, List[Any]]] = {
    "en": {
        "speaker": ["Alice", "Bob", "Carmen", "David", "Elena", "Farid", "Grace", "Hiro", "Isla", "Jonah",
                    "Keira", "Liam", "Maya", "Noah", "Olivia", "Priya", "Rosa", "Sam", "Tara", "Umar"],
        "person": ["Beth", "Marcus", "Nina", "Oscar", "Rachel", "Tom", "Victor", "Wendy", "Felix", "Greta",
                   "Hannah", "Ivan", "Julia", "Kevin", "Laura", "Martin", "Nadia", "Owen"],
        "pet": ["Biscuit", "Pepper", "Mochi", "Rex", "Luna", "Ziggy", "Pickles", "Noodle", "Waffles", "Clover"],
        "rel": ["cousin", "friend", "neighbour", "colleague", "old classmate", "flatmate"],
        "job": ["pharmacist", "paramedic", "architect", "florist", "carpenter", "software tester", "translator",
                "baker", "librarian", "electrician", "physiotherapist", "dental hygienist"],
        "city": ["Leeds", "Bristol", "Lisbon", "Porto", "Denver", "Austin", "Lyon", "Kyoto", "Dublin", "Seattle",
                 "Toronto", "Melbourne", "Prague", "Vienna", "Edinburgh", "Bologna", "Valencia", "Glasgow"],
        "dish": ["lasagne", "mushroom risotto", "chicken curry", "pad thai", "shepherd's pie", "ramen", "paella",
                 "falafel wraps", "beef stew", "fish tacos"],
        "instrument": ["cello", "trumpet", "ukulele", "piano", "violin", "saxophone", "drums", "flute"],
        "allergen": ["peanuts", "shellfish", "sesame", "kiwi", "strawberries", "almonds", "eggs"],
        "book": ["The Salt Road", "Winter Orchard", "Paper Lanterns", "The Quiet Engine", "North of the River",
                 "Copper Sky", "The Glass Harbour"],
        "hotel": ["Harbour View Inn", "Old Mill Lodge", "Blue Door Guesthouse", "Riverside Suites",
                  "Lantern House", "Grand Palace Hotel"],
        "hobby_gift": [("birdwatching", "pair of binoculars"), ("rock climbing", "chalk bag"),
                       ("knitting", "set of merino yarn"), ("chess", "wooden chess set"),
                       ("gardening", "pair of pruning shears"), ("astronomy", "star atlas"),
                       ("photography", "leather camera strap"), ("fishing", "new fishing rod")],
        "course": ["salsa", "pottery", "Spanish", "watercolour", "improv", "woodworking", "yoga", "sushi-making"],
        "venue": ["community centre", "public library", "art school", "leisure centre", "town hall"],
        "project": ["Falcon", "Bluebird", "Atlas", "Horizon", "Juniper", "Orion", "Pebble", "Nimbus"],
        "restaurant": ["Casa Lupe", "The Copper Pot", "Little Saigon", "Trattoria Nonna", "Blue Elephant",
                       "Smoke and Oak", "Golden Lotus"],
        "sport": ["tennis", "badminton", "squash", "volleyball", "table tennis", "basketball", "hockey", "netball"],
        "drink": ["black coffee", "green tea", "oat latte", "chai", "sparkling water", "hot chocolate", "matcha",
                  "earl grey"],
        "company": ["Brightwave", "Northfield Logistics", "Kestrel Labs", "Maple and Co", "Pinecone Media",
                    "Harbor Health"],
        "club_venue": ["the Crown and Anchor pub", "the Green Bean cafe", "the library reading room",
                       "the bakery on Elm Street", "the back room of Chapter Books"],
        "language": ["Portuguese", "Japanese", "German", "Italian", "Korean", "Dutch", "Greek", "Arabic"],
        "color": ["red", "teal", "mustard yellow", "navy blue", "forest green", "lilac", "orange", "grey"],
    },
    "zh": {
        "speaker": ["李雷", "韩梅梅", "王芳", "张伟", "陈静", "刘洋", "赵敏", "孙磊", "周婷", "吴昊",
                    "郑爽", "黄蕾", "杨帆", "徐倩", "朱琳", "胡斌"],
        "person": ["林娜", "高翔", "马丽", "何平", "罗佳", "宋雨", "唐宁", "许晴", "邓超", "冯悦",
                   "曹阳", "彭博", "谢晨", "董洁", "袁野", "蒋涛"],
        "pet": ["豆豆", "球球", "米粒", "团子", "旺财", "糖糖", "小黑", "大黄", "咪咪"],
        "rel": ["表姐", "表哥", "朋友", "邻居", "同事", "老同学", "室友"],
        "job": ["药剂师", "护士", "建筑师", "花艺师", "木匠", "软件测试员", "翻译", "面包师", "图书管理员",
                "电工", "康复治疗师", "会计"],
        "city": ["成都", "杭州", "西安", "厦门", "青岛", "大连", "苏州", "昆明", "南京", "武汉", "长沙",
                 "重庆", "深圳", "哈尔滨"],
        "dish": ["红烧肉", "宫保鸡丁", "麻婆豆腐", "酸菜鱼", "饺子", "回锅肉", "西红柿炒鸡蛋", "糖醋排骨",
                 "担担面", "小笼包"],
        "instrument": ["古筝", "二胡", "钢琴", "小提琴", "吉他", "笛子", "架子鼓", "大提琴"],
        "allergen": ["花生", "海鲜", "芒果", "芝麻", "鸡蛋", "牛奶", "猕猴桃"],
        "book": ["《盐之路》", "《冬天的果园》", "《纸灯笼》", "《安静的引擎》", "《河的北岸》", "《铜色天空》"],
        "hotel": ["海景客栈", "老磨坊酒店", "蓝门民宿", "江畔酒店", "灯笼客栈", "云舍民宿"],
        "hobby_gift": [("观鸟", "一副望远镜"), ("攀岩", "一个镁粉袋"), ("织毛衣", "一套羊毛线"),
                       ("下象棋", "一副红木象棋"), ("养花", "一把修枝剪"), ("看星星", "一本星图"),
                       ("摄影", "一条相机背带"), ("钓鱼", "一根钓鱼竿")],
        "course": ["萨尔萨舞", "陶艺", "西班牙语", "水彩画", "即兴表演", "木工", "瑜伽", "寿司制作"],
        "venue": ["社区活动中心", "市图书馆", "美术学校", "体育馆", "文化馆"],
        "project": ["猎鹰", "青鸟", "北极星", "地平线", "星河", "磐石", "云雀"],
        "restaurant": ["老街小馆", "铜锅居", "阿婆面馆", "蓝象餐厅", "金莲酒家", "西贡小厨"],
        "sport": ["网球", "羽毛球", "壁球", "排球", "乒乓球", "篮球", "台球", "棒球"],
        "drink": ["美式咖啡", "绿茶", "燕麦拿铁", "奶茶", "苏打水", "热可可", "抹茶拿铁", "普洱茶"],
        "company": ["星辰科技", "北田物流", "红隼实验室", "枫叶传媒", "松果文化", "海港医疗"],
        "club_venue": ["街角咖啡馆", "图书馆阅览室", "老王茶馆", "榆树街的面包店", "书店二楼"],
        "language": ["葡萄牙语", "日语", "德语", "意大利语", "韩语", "荷兰语", "希腊语", "阿拉伯语"],
        "color": ["红色", "蓝色", "墨绿色", "浅紫色", "橙色", "灰色", "米黄色", "藏青色"],
    },
}

FILLER_WORDS: Dict[str, Dict[str, List[str]]] = {
    "en": {
        "adj": ["hectic", "quiet", "exhausting", "surprisingly fun", "a bit chaotic", "slow", "stressful", "weird"],
        "genre": ["crime", "cooking", "sci-fi", "documentary", "comedy", "fantasy"],
        "food": ["dumplings", "banana bread", "soup", "pancakes", "tacos", "noodles", "pizza", "scones"],
        "result": ["great", "a bit dry", "surprisingly good", "too salty", "perfect", "edible at best"],
        "weather": ["grey", "rainy", "windy", "humid", "cold", "gloomy"],
        "topic": ["deep sea creatures", "city planning", "ancient Rome", "sleep science", "bees", "volcanoes"],
        "activity": ["running", "drawing", "yoga", "journaling", "swimming"],
        "object": ["tent", "bike", "sewing machine", "projector", "ladder"],
    },
    "zh": {
        "adj": ["忙", "累", "清闲", "乱", "折腾"],
        "adj2": ["还不错", "一般般", "出乎意料地好", "有点咸"],
        "genre": ["悬疑", "美食", "科幻", "纪录", "喜剧", "古装"],
        "food": ["包子", "香蕉面包", "汤面", "煎饼", "火锅", "披萨", "馄饨"],
        "weather": ["阴沉沉的", "老下雨", "刮大风", "闷热", "冷飕飕的"],
        "topic": ["深海生物", "城市规划", "古罗马", "睡眠科学", "蜜蜂", "火山"],
        "activity": ["跑步", "画画", "瑜伽", "写日记", "游泳"],
        "object": ["帐篷", "自行车", "缝纫机", "投影仪", "梯子"],
    },
}

# -- small talk ----------------------------------------------------------------------

GREETINGS = {
    "en": ["{me}: Hi {you}! Good to hear from you.", "{me}: Hey {you}, got a minute to chat?",
           "{me}: {you}! How are you doing?", "{me}: Hello {you}, how's everything?"],
    "zh": ["{me}：{you}，好久不见！", "{me}：嗨，{you}，有空聊两句吗？", "{me}：{you}！你好呀。",
           "{me}：{you}，在忙吗？"],
}
FAREWELLS = {
    "en": ["{me}: Anyway, I should go. Talk soon, {you}!", "{me}: Take care, {you}. Let's catch up properly soon.",
           "{me}: Lovely chatting, {you}. Bye for now!", "{me}: Right, I'm off. Thanks for the chat, {you}."],
    "zh": ["{me}：好啦，我先去忙了，回头聊，{you}！", "{me}：保重，{you}，下次再好好聊。",
           "{me}：聊得真开心，{you}，拜拜！", "{me}：那我先撤了，谢谢你陪我聊天，{you}。"],
}
FILLER = {
    "en": [
        "{me}: How's everything going on your end, {you}?",
        "{me}: Honestly, work has been {adj} but I'm hanging in there.",
        "{me}: Did you ever finish that {genre} series you were watching?",
        "{me}: I tried making {food} at home and it came out {result}.",
        "{me}: The weather has been so {weather}, I barely went outside.",
        "{me}: I keep meaning to book a trip somewhere warm.",
        "{me}: Ha, that sounds exactly like something you would do, {you}.",
        "{me}: I've been trying to drink more water and sleep earlier.",
        "{me}: My plants are finally doing okay, the basil survived.",
        "{me}: We should grab {food} together when things calm down.",
        "{me}: That's so true. I never thought about it like that.",
        "{me}: I'm thinking of rearranging the living room again.",
        "{me}: Work trips are fun until you have to live out of a suitcase.",
        "{me}: Have you seen any good films? I need recommendations.",
        "{me}: The new cafe near my place does great {food}.",
        "{me}: I read an article about {topic}, it was fascinating.",
        "{me}: Honestly {you}, you always know how to cheer me up.",
        "{me}: My commute was a nightmare, the bus broke down halfway.",
        "{me}: I'm trying to get back into {activity}, slowly.",
        "{me}: Do you still have that old {object}? I might borrow it.",
        "{me}: Wedding season is expensive, between gifts and travel.",
        "{me}: Every dog in my street barks at the postman.",
        "{me}: That restaurant on the corner is always fully booked.",
        "{me}: I love that for you, {you}!",
        "{me}: No way! Tell me everything.",
        "{me}: Same here, I could use a break.",
        "{me}: I've got a pile of laundry that's judging me.",
        "{me}: Cooking at home is way cheaper than eating out.",
        "{me}: The hotel breakfast buffet is the best part of any trip.",
        "{me}: I need a new book to read, any ideas?",
        "{me}: My car needs a service, the brakes are squeaking.",
        "{me}: I'm so proud of you, {you}, seriously.",
        "{me}: Let me know if you need help with anything.",
        "{me}: That reminds me, I owe you a coffee.",
        "{me}: The class I took at uni on {topic} was my favourite.",
        "{me}: Is your job still as busy as it was?",
        "{me}: I spent ages choosing a birthday card, then forgot to post it.",
        "{me}: My family group chat is pure chaos, {you}.",
        "{me}: I finally fixed the wobbly shelf in the hallway.",
        "{me}: Do you think it's worth getting a bread maker?",
        "{me}: The gym was packed, so I gave up and went home.",
        "{me}: I've been listening to a podcast about {topic}.",
        "{me}: My landlord still hasn't fixed the heating.",
        "{me}: I can't believe how expensive {food} has become.",
        "{me}: Everyone at work is talking about holidays, they all want a trip.",
        "{me}: Sorry, I was half asleep when you messaged, {you}.",
        "{me}: I ordered a {object} online and it arrived broken.",
        "{me}: Fair enough, {you}. I'd probably do the same.",
        "{me}: I tried to meditate and fell asleep instead.",
        "{me}: My neighbour keeps borrowing my {object}.",
        "{me}: There's a new season of that {genre} show out.",
        "{me}: It's been a {adj} stretch, but things are looking up.",
        "{me}: I should call my parents more, honestly.",
        "{me}: How did your presentation go, {you}?",
        "{me}: Pets are great, but the vet bills are scary.",
        "{me}: I moved my desk next to the window and it helps a lot.",
    ],
    "zh": [
        "{me}：{you}，你那边一切都好吗？",
        "{me}：工作挺{adj}的，不过还撑得住。",
        "{me}：你看的那部{genre}剧追完了吗？",
        "{me}：我试着做了{food}，味道{adj2}。",
        "{me}：天气一直{weather}，我都不想出门。",
        "{me}：我一直想找个暖和的地方去旅行。",
        "{me}：哈哈，这确实像你会干的事，{you}。",
        "{me}：我在努力多喝水、早点睡觉。",
        "{me}：我养的花终于活过来了，罗勒也没死。",
        "{me}：有空我们一起去吃{food}吧。",
        "{me}：说得太对了，我从来没这么想过。",
        "{me}：我又想重新布置一下客厅了。",
        "{me}：出差好玩是好玩，就是老住酒店有点累。",
        "{me}：有什么好看的电影吗？推荐一下。",
        "{me}：我家附近新开的咖啡馆{food}做得不错。",
        "{me}：我看了一篇关于{topic}的文章，挺有意思的。",
        "{me}：{you}，还是你最会安慰人。",
        "{me}：通勤太折腾了，公交半路还坏了。",
        "{me}：我想慢慢把{activity}重新捡起来。",
        "{me}：你那个旧{object}还在吗？我可能要借一下。",
        "{me}：婚礼季真费钱，红包加路费。",
        "{me}：我们那条街的狗见到快递员就叫。",
        "{me}：街角那家餐厅总是订不到位子。",
        "{me}：太替你高兴了，{you}！",
        "{me}：真的假的？快跟我说说。",
        "{me}：我也是，真想休息一下。",
        "{me}：家里的衣服堆成山了。",
        "{me}：在家做饭比出去吃省钱多了。",
        "{me}：酒店早餐是旅行里最开心的部分。",
        "{me}：我想找本新书看，有推荐吗？",
        "{me}：我的车该保养了，刹车一直响。",
        "{me}：有什么需要帮忙的尽管说。",
        "{me}：对了，我还欠你一杯咖啡呢。",
        "{me}：大学时那门{topic}课是我最喜欢的。",
        "{me}：你的工作还是那么忙吗？",
        "{me}：我挑生日贺卡挑了半天，结果忘了寄。",
        "{me}：{you}，我们家的群聊简直一团乱。",
        "{me}：我的读书计划又没完成。",
        "{me}：我终于把走廊那个晃来晃去的架子修好了。",
        "{me}：你觉得买面包机值得吗？",
        "{me}：健身房人太多了，我直接回家了。",
        "{me}：我在听一个讲{topic}的播客。",
        "{me}：房东还没来修暖气。",
        "{me}：{food}怎么变得这么贵了。",
        "{me}：公司同事都在聊假期，人人都想去旅行。",
        "{me}：不好意思，{you}，你发消息的时候我快睡着了。",
        "{me}：我网上买了个{object}，到手就是坏的。",
        "{me}：也是，{you}，换我也会这么做。",
        "{me}：我试着冥想，结果睡着了。",
        "{me}：邻居老是借我的{object}。",
        "{me}：那部{genre}剧出新一季了。",
        "{me}：我真该多给爸妈打电话。",
        "{me}：{you}，你的汇报怎么样了？",
        "{me}：养宠物是开心，就是看兽医太贵了。",
        "{me}：我把书桌搬到窗边了，效率高了不少。",
    ],
}

# Distractors about a third party or a pet: they name the entity, never a fact about it.
ENTITY_MENTIONS = {
    "en": {
        "person": ["{me}: How is {x} doing, by the way?", "{me}: {x} says hi, we chatted on the phone for ages.",
                   "{me}: I still owe {x} a call.", "{me}: {x} sent me a funny video of a goat.",
                   "{me}: I bumped into {x} at the supermarket, small world."],
        "pet": ["{me}: {x} chewed through another shoe.", "{me}: {x} fell asleep on my jumper again.",
                "{me}: Give {x} a scratch behind the ears from me."],
        "restaurant": ["{me}: I walked past {x}, there was a queue outside.",
                       "{me}: Someone at work was raving about {x}."],
    },
    "zh": {
        "person": ["{me}：对了，{x}还好吗？", "{me}：{x}让我跟你问声好，我们打了好久的电话。",
                   "{me}：我还欠{x}一个电话。", "{me}：{x}给我发了一个山羊的搞笑视频。",
                   "{me}：我在超市碰到{x}了，世界真小。"],
        "pet": ["{me}：{x}又把我的拖鞋咬坏了。", "{me}：{x}又在我的毛衣上睡着了。", "{me}：替我摸摸{x}的头。"],
        "restaurant": ["{me}：我路过{x}，门口排着长队。", "{me}：公司有人一直在夸{x}。"],
    },
}

# -- planted facts -------------------------------------------------------------------
# A kind: "slots" maps slot -> word list (a tuple slot unpacks a tuple word), "answer"
# names the slot that answers, "entity" (slot, type) registers a nameable entity, and
# each language gives "say" (the evidence), the question(s) and optional "near" lines
# (distractors that share the entity or topic but not the fact).

SINGLE_HOP = [
    {"key": "person_job", "slots": {"rel": "rel", "person": "person", "job": "job", "city": "city"},
     "answer": "job", "entity": ("person", "person"),
     "en": {"say": "{me}: My {rel} {person} works as a {job} in {city}.", "ask": "What does {person} work as?",
            "para": "What is {person}'s profession?", "near": ["{you}: I've heard {city} is lovely in spring."]},
     "zh": {"say": "{me}：我{rel}{person}在{city}工作，是一名{job}。", "ask": "{person}做什么工作？",
            "para": "{person}的职业是什么？", "near": ["{you}：听说{city}春天特别美。"]}},
    {"key": "pet_name", "slots": {"pet": "pet"}, "answer": "pet", "entity": ("pet", "pet"),
     "en": {"say": "{me}: Our dog is called {pet}, he's a rescue.", "ask": "What is {me}'s dog called?",
            "para": "What name did {me} give the family pet?", "near": ["{you}: Every dog at the park loves you."]},
     "zh": {"say": "{me}：我们家的狗叫{pet}，是从救助站领养的。", "ask": "{me}家的狗叫什么名字？",
            "para": "{me}给家里的宠物起了什么名？", "near": ["{you}：公园里的狗都喜欢你。"]}},
    {"key": "hometown", "slots": {"city": "city"}, "answer": "city",
     "en": {"say": "{me}: I grew up in {city}, right by the harbour.", "ask": "Where did {me} grow up?",
            "para": "What is {me}'s hometown?", "near": ["{you}: I've only been to {city} once, for a conference."]},
     "zh": {"say": "{me}：我是在{city}长大的，家就在海边。", "ask": "{me}在哪里长大？",
            "para": "{me}的家乡是哪里？", "near": ["{you}：我只去过一次{city}，还是去开会。"]}},
    {"key": "instrument", "slots": {"instrument": "instrument"}, "answer": "instrument",
     "en": {"say": "{me}: I've played the {instrument} since I was twelve.",
            "ask": "What instrument has {me} played since age twelve?",
            "para": "Which musical hobby did {me} pick up as a kid?",
            "near": ["{you}: I tried the {instrument} once and gave up after a week."]},
     "zh": {"say": "{me}：我从十二岁就开始学{instrument}了。", "ask": "{me}从十二岁开始学什么？",
            "para": "{me}小时候学的是哪种乐器？", "near": ["{you}：我学过一阵{instrument}，很快就放弃了。"]}},
    {"key": "allergy", "slots": {"allergen": "allergen"}, "answer": "allergen",
     "en": {"say": "{me}: I'm allergic to {allergen}, so I always check the labels.",
            "ask": "What is {me} allergic to?",
            "para": "Which food gives {me} a bad reaction?",
            "near": ["{you}: The bakery near me puts {allergen} in everything."]},
     "zh": {"say": "{me}：我对{allergen}过敏，买东西都要看配料表。", "ask": "{me}对什么过敏？",
            "para": "{me}吃了什么会身体不舒服？", "near": ["{you}：我家楼下的面包店什么都放{allergen}。"]}},
    {"key": "book", "slots": {"book": "book"}, "answer": "book",
     "en": {"say": "{me}: The book on my nightstand is {book}, I can't put it down.",
            "ask": "What book is on {me}'s nightstand?", "para": "What is {me} reading at bedtime?",
            "near": ["{you}: Someone on the train was reading {book}."]},
     "zh": {"say": "{me}：我床头放的书是{book}，根本停不下来。", "ask": "{me}床头放的是什么书？",
            "para": "{me}睡前在读哪本？", "near": ["{you}：地铁上有人在看{book}。"]}},
    {"key": "manager", "slots": {"person": "person"}, "answer": "person", "entity": ("person", "person"),
     "en": {"say": "{me}: My manager is called {person}, very fair.", "ask": "What is the name of {me}'s manager?",
            "para": "Who is {me}'s boss?"},
     "zh": {"say": "{me}：我的经理叫{person}，人很公正。", "ask": "{me}的经理叫什么？", "para": "{me}的领导是谁？"}},
    {"key": "person_city", "slots": {"rel": "rel", "person": "person", "city": "city"}, "answer": "city",
     "entity": ("person", "person"),
     "en": {"say": "{me}: My {rel} {person} lives in {city} with two cats.", "ask": "Where does {person} live?",
            "para": "What city is {person} based in?", "near": ["{you}: I'd love to visit {city} someday."]},
     "zh": {"say": "{me}：我{rel}{person}住在{city}，养了两只猫。", "ask": "{person}住在哪里？",
            "para": "{person}定居在哪座城市？", "near": ["{you}：我一直想去{city}看看。"]}},
    {"key": "dish", "slots": {"dish": "dish"}, "answer": "dish",
     "en": {"say": "{me}: My favourite dish is {dish}, I could eat it every day.",
            "ask": "What is {me}'s favourite dish?",
            "para": "Which meal does {me} love most?", "near": ["{you}: I've never managed to cook a decent {dish}."]},
     "zh": {"say": "{me}：我最喜欢的菜是{dish}，天天吃都不腻。", "ask": "{me}最喜欢的菜是什么？",
            "para": "{me}最爱吃哪道？", "near": ["{you}：我做{dish}从来没成功过。"]}},
]

MULTI_SESSION: List[Dict[str, Any]] = [
    {"key": "trip_hotel", "slots": {"person": "person", "city": "city", "hotel": "hotel"}, "answer": "hotel",
     "entity": ("person", "person"),
     "en": {"first": "{me}: I'm planning a trip to {city} with {person}.",
            "second": "{me}: For the {city} trip I booked a room at the {hotel}.",
            "ask": "Which hotel did {me} book for the trip with {person}?",
            "near": ["{you}: {city} sounds amazing, bring me a souvenir."]},
     "zh": {"first": "{me}：我打算和{person}一起去{city}旅行。", "second": "{me}：去{city}的那趟我订了{hotel}的房间。",
            "ask": "{me}和{person}去旅行订的是哪家酒店？", "near": ["{you}：{city}听起来好棒，记得给我带纪念品。"]}},
    {"key": "gift", "slots": {"person": "person", ("hobby", "gift"): "hobby_gift"}, "answer": "gift",
     "entity": ("person", "person"),
     "en": {"first": "{me}: {person} is really into {hobby}.",
            "second": "{me}: I bought a {gift} for my friend who loves {hobby}.",
            "ask": "What gift did {me} buy for {person}?", "near": ["{you}: Honestly, {hobby} sounds so peaceful."]},
     "zh": {"first": "{me}：{person}特别喜欢{hobby}。", "second": "{me}：我给那个喜欢{hobby}的朋友买了{gift}。",
            "ask": "{me}给{person}买了什么礼物？", "near": ["{you}：{hobby}听起来很治愈。"]}},
    {"key": "class_teacher", "slots": {"course": "course", "venue": "venue", "person": "person"}, "answer": "person",
     "entity": ("person", "person"),
     "en": {"first": "{me}: I signed up for a {course} class at the {venue}.",
            "second": "{me}: The {course} teacher is called {person}, really patient.",
            "ask": "Who teaches the class {me} signed up for at the {venue}?",
            "near": ["{you}: Is the {course} class fun so far?"]},
     "zh": {"first": "{me}：我在{venue}报了一个{course}班。",
            "second": "{me}：{course}班的老师叫{person}，特别有耐心。",
            "ask": "{me}在{venue}报的那个班，老师是谁？", "near": ["{you}：{course}班好玩吗？"]}},
    {"key": "project_city", "slots": {"person": "person", "project": "project", "city": "city"}, "answer": "city",
     "entity": ("person", "person"),
     "en": {"first": "{me}: My colleague {person} is leading the {project} project.",
            "second": "{me}: The {project} project launches in {city} first.",
            "ask": "Where will the project led by {person} launch first?",
            "near": ["{you}: {project} sounds like a secret agent code name."]},
     "zh": {"first": "{me}：我同事{person}在负责{project}项目。", "second": "{me}：{project}项目会先在{city}上线。",
            "ask": "{person}负责的项目会先在哪里上线？", "near": ["{you}：{project}这个名字听起来像特工行动。"]}},
    {"key": "restaurant_dish", "slots": {"person": "person", "restaurant": "restaurant", "dish": "dish"},
     "answer": "dish", "entity": ("person", "person"), "entity2": ("restaurant", "restaurant"),
     "en": {"first": "{me}: {person} recommended a restaurant called {restaurant}.",
            "second": "{me}: We finally tried {restaurant}, the {dish} was incredible.",
            "ask": "What dish did {me} love at the restaurant {person} recommended?"},
     "zh": {"first": "{me}：{person}给我推荐了一家叫{restaurant}的餐厅。",
            "second": "{me}：我们终于去了{restaurant}，那里的{dish}太好吃了。",
            "ask": "在{person}推荐的餐厅里，{me}觉得哪道菜好吃？"}},
]

# "old"/"new" are two values from the same word list ("date" makes wedding dates).
KNOWLEDGE_UPDATE = [
    {"key": "residence", "pool": "city", "slots": {},
     "en": {"old": "{me}: I live in {old}, in a flat near the river.",
            "new": "{me}: Big change: I moved to {new}, so I no longer live in {old}.",
            "ask": "Where does {me} live now?"},
     "zh": {"old": "{me}：我现在住在{old}，房子离地铁站很近。",
            "new": "{me}：跟你说个消息，我搬到{new}了，不再住在{old}了。",
            "ask": "{me}现在住在哪里？"}},
    {"key": "wedding", "pool": "date", "slots": {"person": "person"}, "entity": ("person", "person"),
     "en": {"old": "{me}: {person}'s wedding is on {old}, I already sorted my outfit.",
            "new": "{me}: {person}'s wedding has been postponed to {new}, the venue was double-booked.",
            "ask": "What is the current date of {person}'s wedding?"},
     "zh": {"old": "{me}：{person}的婚礼定在{old}，我已经准备好礼物了。",
            "new": "{me}：{person}的婚礼推迟到{new}了，场地那边出了问题。",
            "ask": "{person}的婚礼现在是哪天？"}},
    {"key": "job", "pool": "job", "slots": {"company": "company"},
     "en": {"old": "{me}: I work as a {old} at {company}, the team is lovely.",
            "new": "{me}: I switched jobs, I work as a {new} now and I'm no longer at {company}.",
            "ask": "What is {me}'s current job?"},
     "zh": {"old": "{me}：我在{company}当{old}，同事都挺好的。",
            "new": "{me}：我换工作了，现在改成当{new}了，不再在{company}上班。",
            "ask": "{me}现在做什么工作？"}},
    {"key": "drink", "pool": "drink", "slots": {},
     "en": {"old": "{me}: My go-to drink is {old}, I can't function without it.",
            "new": "{me}: Actually my go-to drink is {new} instead, I gave up {old}.",
            "ask": "What is {me}'s go-to drink now?"},
     "zh": {"old": "{me}：我每天都要喝一杯{old}，不喝没精神。",
            "new": "{me}：其实我每天喝的已经换成{new}了，不喝{old}了。",
            "ask": "{me}现在每天喝什么？"}},
    {"key": "sport", "pool": "sport", "slots": {},
     "en": {"old": "{me}: My main sport is {old}, I play at the club near work.",
            "new": "{me}: My main sport changed to {new}, I stopped playing {old} because of my knee.",
            "ask": "What is {me}'s main sport now?"},
     "zh": {"old": "{me}：我主要的运动是打{old}，常去公司附近的俱乐部。",
            "new": "{me}：我主要的运动改成打{new}了，膝盖不好，不再打{old}了。",
            "ask": "{me}现在主要的运动是什么？"}},
    {"key": "book_club", "pool": "club_venue", "slots": {},
     "en": {"old": "{me}: Our book club meets at {old}.",
            "new": "{me}: The book club moved to {new}, {old} got too noisy.",
            "ask": "Where does {me}'s book club meet now?"},
     "zh": {"old": "{me}：我们读书会在{old}聚会。", "new": "{me}：读书会的地点换成{new}了，{old}太吵了。",
            "ask": "{me}的读书会现在在哪里聚会？"}},
]

# (evidence with {expr}, question, reply that names the event but not its date)
RELATIVE_EVENTS = {
    "en": {
        "past": [
            ("{me}: I went to the pottery fair {expr} and bought two mugs.", "When did {me} go to the pottery fair?",
             "{you}: The pottery fair always has such lovely stuff."),
            ("{me}: We adopted a puppy {expr}, the flat is total chaos.", "When did {me} adopt the puppy?",
             "{you}: A puppy! You have to send me pictures."),
            ("{me}: I ran a 10k race {expr} and my legs still hurt.", "When did {me} run the 10k race?",
             "{you}: A 10k race is no joke, well done."),
            ("{me}: I took my nephew to the aquarium {expr}.", "When did {me} visit the aquarium?",
             "{you}: I love the aquarium, the jellyfish room especially."),
            ("{me}: I had a wisdom tooth pulled {expr}, my face is still puffy.",
             "When did {me} have a wisdom tooth pulled?", "{you}: Ouch, wisdom teeth are the worst."),
            ("{me}: I went to a wine tasting {expr}, very fancy.", "When did {me} go to the wine tasting?",
             "{you}: A wine tasting sounds very grown-up of you."),
            ("{me}: We painted the spare room {expr}, it's sage green.", "When did {me} paint the spare room?",
             "{you}: Sage green for the spare room is a good call."),
            ("{me}: I tried indoor skydiving {expr}, terrifying but fun.", "When did {me} try indoor skydiving?",
             "{you}: Indoor skydiving is on my bucket list."),
            ("{me}: I got locked out of my flat {expr} and had to call a locksmith.",
             "When did {me} get locked out of the flat?", "{you}: Getting locked out is my nightmare."),
        ],
        "future": [
            ("{me}: I have my driving test {expr}, wish me luck.", "When is {me}'s driving test?",
             "{you}: You'll smash the driving test, don't worry."),
            ("{me}: I'm seeing the dentist {expr}, just a check-up.", "When is {me}'s dentist appointment?",
             "{you}: I should book a dentist check-up too."),
            ("{me}: Our band plays its first gig {expr}.", "When is the first gig of {me}'s band?",
             "{you}: Your band's first gig! I'll be there."),
            ("{me}: We're hosting a barbecue {expr}, you should come.", "When is {me} hosting the barbecue?",
             "{you}: I'll bring something for the barbecue."),
            ("{me}: I'm picking up the new sofa {expr}.", "When is {me} picking up the new sofa?",
             "{you}: Finally a new sofa, the old one was sad."),
            ("{me}: My parents are visiting {expr}, so I'm tidying everything.", "When are {me}'s parents visiting?",
             "{you}: Say hello to your parents from me."),
        ],
    },
    "zh": {
        "past": [
            ("{me}：我{expr}去了陶艺展，买了两个杯子。", "{me}什么时候去的陶艺展？", "{you}：陶艺展上的东西都好好看。"),
            ("{me}：我们{expr}领养了一只小狗，家里乱成一团。", "{me}什么时候领养的小狗？",
             "{you}：小狗！快给我发照片。"),
            ("{me}：我{expr}跑了一个十公里比赛，腿到现在还疼。", "{me}什么时候跑的十公里比赛？",
             "{you}：十公里比赛可不轻松，厉害。"),
            ("{me}：我{expr}带外甥去了水族馆。", "{me}什么时候去的水族馆？", "{you}：我超喜欢水族馆，尤其是水母馆。"),
            ("{me}：我{expr}拔了一颗智齿，脸到现在还肿着。", "{me}什么时候拔的智齿？", "{you}：拔智齿太遭罪了。"),
            ("{me}：我{expr}参加了一个品酒会，挺高级的。", "{me}什么时候参加的品酒会？",
             "{you}：品酒会听起来好有格调。"),
            ("{me}：我们{expr}把客房刷成了浅绿色。", "{me}什么时候粉刷的客房？", "{you}：客房刷浅绿色挺好看的。"),
            ("{me}：我{expr}体验了室内跳伞，吓死了但很好玩。", "{me}什么时候体验的室内跳伞？",
             "{you}：室内跳伞一直在我的愿望清单上。"),
            ("{me}：我{expr}把自己锁在门外了，只好叫了开锁师傅。", "{me}什么时候被锁在门外的？",
             "{you}：被锁在门外是我的噩梦。"),
        ],
        "future": [
            ("{me}：我{expr}要考驾照，祝我好运吧。", "{me}什么时候考驾照？", "{you}：驾照考试你肯定没问题。"),
            ("{me}：我{expr}约了牙医，只是例行检查。", "{me}什么时候去看牙医？", "{you}：我也该去看看牙医了。"),
            ("{me}：我们乐队{expr}第一次演出。", "{me}的乐队什么时候第一次演出？", "{you}：乐队第一次演出！我一定去。"),
            ("{me}：我们{expr}在家办烧烤聚会，你也来吧。", "{me}什么时候办烧烤聚会？", "{you}：烧烤聚会我带点喝的。"),
            ("{me}：我{expr}去取新沙发。", "{me}什么时候去取新沙发？", "{you}：终于换新沙发了，旧的太破了。"),
            ("{me}：我爸妈{expr}来看我，我正在大扫除。", "{me}的爸妈什么时候来？", "{you}：替我向叔叔阿姨问好。"),
        ],
    },
}

# Filler with a labelled (resolvable) expression, and with a vague one (labelled null).
RELATIVE_FILLER = {
    "en": {
        "past": ["{me}: I finally cleaned out the garage {expr}.",
                 "{me}: Our building had a power cut {expr}, total darkness.",
                 "{me}: My phone screen cracked {expr}, of course.",
                 "{me}: The neighbour's cat got stuck on our roof {expr}."],
        "future": ["{me}: I'm getting a haircut {expr}, long overdue.",
                   "{me}: I'm meeting an old friend for brunch {expr}.",
                   "{me}: The plumber is coming {expr} to fix the shower."],
        "vague": ["{me}: I bumped into my old maths teacher {expr}, so random.",
                  "{me}: I started doing crosswords {expr}, they're addictive.",
                  "{me}: My aunt took up salsa dancing {expr}, good for her."],
    },
    "zh": {
        "past": ["{me}：我{expr}终于把车库收拾干净了。", "{me}：我们楼{expr}停电了，一片漆黑。",
                 "{me}：我的手机屏幕{expr}摔裂了。", "{me}：邻居家的猫{expr}爬到我们屋顶上了。"],
        "future": ["{me}：我{expr}要去剪头发，早该剪了。", "{me}：我{expr}要和老朋友吃早午饭。",
                   "{me}：水管工{expr}来修淋浴。"],
        "vague": ["{me}：我{expr}在超市碰到了以前的数学老师。", "{me}：我{expr}开始玩填字游戏了，挺上瘾的。",
                  "{me}：我姑姑{expr}开始学跳舞了，真不错。"],
    },
}
VAGUE_EXPRESSIONS = {"en": ["recently", "the other day", "a while ago", "not long ago", "some time ago"],
                     "zh": ["最近", "前几天", "前阵子", "不久前"]}

# Relative expression forms: a name for the rule, resolved by `resolve_relative`.
RELATIVE_FORMS = {
    "en": {"past": ["yesterday", "the day before yesterday", "days_ago", "last week", "weeks_ago", "last month",
                    "last year", "last_weekday"],
           "future": ["tomorrow", "the day after tomorrow", "in_days", "next week", "next month", "next_weekday",
                      "this weekend"]},
    "zh": {"past": ["yesterday", "the day before yesterday", "days_ago", "last week", "last month", "last year",
                    "last_week_weekday"],
           "future": ["tomorrow", "the day after tomorrow", "in_days", "next week", "next month", "next_week_weekday",
                      "this weekend"]},
}
ZH_FIXED = {"yesterday": "昨天", "the day before yesterday": "前天", "last week": "上周", "last month": "上个月",
            "last year": "去年", "tomorrow": "明天", "the day after tomorrow": "后天", "next week": "下周",
            "next month": "下个月", "this weekend": "这周末"}
EN_WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ZH_WEEKDAYS = ["一", "二", "三", "四", "五", "六", "日"]
EN_NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
EN_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
             "November", "December"]

# (verb phrase said with the date, "when" question, the event as an answer)
ABSOLUTE_EVENTS = {
    "en": [
        ("ran my first half marathon", "When did {me} run a first half marathon?", "ran a first half marathon"),
        ("got my scuba diving licence", "When did {me} get a scuba diving licence?", "got a scuba diving licence"),
        ("signed the lease on my new studio", "When did {me} sign the studio lease?",
         "signed the lease on a new studio"),
        ("bought my first road bike", "When did {me} buy a first road bike?", "bought a first road bike"),
        ("planted the apple tree in the garden", "When did {me} plant the apple tree?",
         "planted an apple tree in the garden"),
        ("finished the online coding course", "When did {me} finish the online coding course?",
         "finished an online coding course"),
        ("performed at an open mic night", "When did {me} perform at the open mic night?",
         "performed at an open mic night"),
        ("met my favourite author at a book signing", "When did {me} meet a favourite author at a book signing?",
         "met a favourite author at a book signing"),
    ],
    "zh": [
        ("跑完了人生第一个半程马拉松", "{me}是什么时候跑完第一个半程马拉松的？", "跑完了人生第一个半程马拉松"),
        ("拿到了潜水证", "{me}什么时候拿到潜水证的？", "拿到了潜水证"),
        ("签了新工作室的租约", "{me}什么时候签的工作室租约？", "签了新工作室的租约"),
        ("买了第一辆公路自行车", "{me}什么时候买的第一辆公路车？", "买了第一辆公路自行车"),
        ("在院子里种了一棵苹果树", "{me}什么时候种的苹果树？", "在院子里种了一棵苹果树"),
        ("学完了网上的编程课", "{me}什么时候学完的编程课？", "学完了网上的编程课"),
        ("在开放麦之夜上台表演了", "{me}什么时候在开放麦表演的？", "在开放麦之夜上台表演"),
        ("在签售会上见到了最喜欢的作家", "{me}什么时候见到了最喜欢的作家？", "在签售会上见到了最喜欢的作家"),
    ],
}
ABSOLUTE_SAY = {"en": "{me}: I {verb} {date}, {comment}.", "zh": "{me}：我{date}{verb}，{comment}。"}
ABSOLUTE_WHAT = {"en": "What did {me} do {date}?", "zh": "{me}在{date}做了什么？"}
ABSOLUTE_COMMENTS = {"en": ["what a day that was", "I was so nervous", "totally worth it", "I'm still proud of it"],
                     "zh": ["那天真难忘", "紧张得不行", "太值了", "到现在还挺骄傲的"]}
ABSOLUTE_FORMS = {"en": ["dmy", "md", "iso", "us", "month", "year"], "zh": ["dmy", "md", "iso", "month", "year"]}

MULTIPLE_CHOICE = [
    {"key": "potluck_dish", "pool": "dish", "slots": {},
     "en": {"say": "{me}: For the reunion potluck I'm bringing {x}.",
            "ask": "What is {me} bringing to the reunion potluck?",
            "mention": ["{you}: I made {x} for a dinner party once, total disaster.",
                        "{you}: Honestly, {x} is my ultimate comfort food.",
                        "{me}: The canteen at work serves {x} way too often."]},
     "zh": {"say": "{me}：同学聚会每人带一道菜，我准备带{x}。", "ask": "{me}准备给同学聚会带什么菜？",
            "mention": ["{you}：我有次请客做了{x}，结果翻车了。", "{you}：{x}是我的快乐源泉。",
                        "{me}：公司食堂老是做{x}，吃腻了。"]}},
    {"key": "door_colour", "pool": "color", "slots": {"rel": "rel", "person": "person"}, "entity": ("person", "person"),
     "en": {"say": "{me}: My {rel} {person} painted the front door {x}.",
            "ask": "What colour did {person} paint the front door?",
            "mention": ["{you}: I bought a {x} raincoat, very bold.", "{me}: Our office walls are {x}, so depressing.",
                        "{you}: They painted the new bus shelter {x}, it's hideous."]},
     "zh": {"say": "{me}：我{rel}{person}把大门刷成了{x}。", "ask": "{person}把大门刷成了什么颜色？",
            "mention": ["{you}：我买了一件{x}的雨衣，特别显眼。", "{me}：我们办公室的墙是{x}的，看着就压抑。",
                        "{you}：新公交站刷成了{x}，丑死了。"]}},
    {"key": "language", "pool": "language", "slots": {},
     "en": {"say": "{me}: I'm learning {x} on an app, trying to keep my streak.",
            "ask": "Which language is {me} learning?",
            "mention": ["{you}: Apparently {x} is really hard to pick up.", "{you}: My neighbour speaks {x} at home.",
                        "{me}: I took {x} at school but forgot all of it."]},
     "zh": {"say": "{me}：我在用App学{x}，已经连续打卡好久了。", "ask": "{me}在学哪种语言？",
            "mention": ["{you}：听说{x}特别难学。", "{you}：我邻居在家说{x}。",
                        "{me}：我上学时学过{x}，现在全忘了。"]}},
    {"key": "kitten", "pool": "pet", "slots": {}, "entity": ("pet", "x"),
     "en": {"say": "{me}: We named the new kitten {x}.", "ask": "What did {me} name the new kitten?",
            "mention": ["{you}: My aunt's parrot is called {x}.", "{you}: {x} would be a cute name for a goldfish.",
                        "{me}: The dog at the corner shop is called {x}."]},
     "zh": {"say": "{me}：我们给新来的小猫取名叫{x}。", "ask": "{me}给新来的小猫取了什么名字？",
            "mention": ["{you}：我姑姑的鹦鹉叫{x}。", "{you}：{x}这个名字给金鱼用挺可爱的。",
                        "{me}：楼下小卖部的狗叫{x}。"]}},
    {"key": "person_sport", "pool": "sport", "slots": {"person": "person"}, "entity": ("person", "person"),
     "en": {"say": "{me}: {person} plays {x} competitively, it's intense.", "ask": "What sport does {person} play?",
            "mention": ["{you}: I watched a {x} match on TV, so tense.", "{me}: I was terrible at {x} at school.",
                        "{you}: Our office is organising a {x} tournament."]},
     "zh": {"say": "{me}：{person}打{x}是专业水平，特别拼。", "ask": "{person}练的是什么运动？",
            "mention": ["{you}：我在电视上看了一场{x}比赛，太紧张了。", "{me}：我上学时{x}打得特别烂。",
                        "{you}：我们公司组织了{x}友谊赛。"]}},
]

UNANSWERABLE = {
    "en": {"person": ["Where did {x} go to university?", "How old is {x}?", "What is {x}'s favourite film?",
                      "Which football team does {x} support?", "When is {x}'s birthday?"],
           "pet": ["How old is {x}?", "What breed is {x}?", "What does {x} like to eat?"],
           "restaurant": ["How much did the meal at {x} cost?", "Which street is {x} on?"]},
    "zh": {"person": ["{x}在哪里上的大学？", "{x}今年多大了？", "{x}最喜欢哪部电影？", "{x}支持哪支足球队？",
                      "{x}的生日是哪天？"],
           "pet": ["{x}几岁了？", "{x}是什么品种？", "{x}爱吃什么？"],
           "restaurant": ["在{x}吃那顿饭花了多少钱？", "{x}在哪条街上？"]},
}
UNANSWERABLE_ANSWER = {"en": "Not mentioned in the conversation.", "zh": "对话中没有提到。"}

# -- relative dates ------------------------------------------------------------------

DAY = datetime.timedelta(days=1)


def _monday(day: datetime.date) -> datetime.date:
    return day - day.weekday() * DAY


def _month_span(year: int, month: int) -> Tuple[datetime.date, datetime.date]:
    first = datetime.date(year, month, 1)
    nxt = datetime.date(year + (month == 12), month % 12 + 1, 1)
    return first, nxt - DAY


def resolve_relative(form: str, day: datetime.date, n: int = 0) -> Tuple[datetime.date, datetime.date]:
    """The (start, end) dates of a relative form said on `day` (see the module conventions).

    `n` is the count for days_ago / in_days / weeks_ago and the weekday (0 = Monday) for
    the weekday forms.
    """
    single = {"yesterday": -1, "the day before yesterday": -2, "tomorrow": 1, "the day after tomorrow": 2,
              "days_ago": -n, "in_days": n}
    if form in single:
        d = day + single[form] * DAY
        return d, d
    monday = _monday(day)
    weeks = {"last week": -1, "next week": 1, "weeks_ago": -n}
    if form in weeks:
        start = monday + 7 * weeks[form] * DAY
        return start, start + 6 * DAY
    if form == "this weekend":
        return monday + 5 * DAY, monday + 6 * DAY
    if form == "last month":
        return _month_span(day.year - (day.month == 1), (day.month - 2) % 12 + 1)
    if form == "next month":
        return _month_span(day.year + (day.month == 12), day.month % 12 + 1)
    if form == "last year":
        return datetime.date(day.year - 1, 1, 1), datetime.date(day.year - 1, 12, 31)
    if form == "last_weekday":
        d = day - ((day.weekday() - n) % 7 or 7) * DAY
        return d, d
    if form == "next_weekday":
        d = day + ((n - day.weekday()) % 7 or 7) * DAY
        return d, d
    if form in ("last_week_weekday", "next_week_weekday"):
        d = monday + (7 if form.startswith("next") else -7) * DAY + n * DAY
        return d, d
    raise ValueError("unknown relative form %r" % form)


def relative_text(lang: str, form: str, n: int = 0) -> str:
    """How a relative form is written (the `expression` recorded for it)."""
    if lang == "zh":
        special = {"days_ago": "%d天前" % n, "in_days": "%d天后" % n,
                   "last_week_weekday": "上周" + ZH_WEEKDAYS[n], "next_week_weekday": "下周" + ZH_WEEKDAYS[n]}
        return special.get(form) or ZH_FIXED[form]
    if form == "days_ago":
        return "%s days ago" % (EN_NUMBERS[n] if n % 2 else str(n))
    if form == "in_days":
        return "in %d days" % n
    if form == "weeks_ago":
        return "%s weeks ago" % EN_NUMBERS[n]
    if form in ("last_weekday", "next_weekday"):
        return "%s %s" % (form.split("_")[0], EN_WEEKDAYS[n])
    return form


def _span_answer(start: datetime.date, end: datetime.date) -> str:
    return start.isoformat() if start == end else "%s/%s" % (start.isoformat(), end.isoformat())


# -- one user ------------------------------------------------------------------------

class _Line:
    """A turn being built: speaker index (0 = A, role user; 1 = B) and text; its id comes later."""

    def __init__(self, speaker: int, text: str):
        self.speaker = speaker
        self.text = text
        self.turn_id = ""


class _User:
    """One user's conversation under construction."""

    last_start_day, gap_days = LAST_START_DAY, GAP_DAYS

    def __init__(self, lang: str, user_id: str, rng: random.Random):
        self.lang = lang
        self.user_id = user_id
        self.rng = rng
        self.pools: Dict[str, List[Any]] = {}
        self.names = self.draw("speaker"), self.draw("speaker")
        self.days, self.stamps = self._session_dates()
        self.blocks: List[List[List[_Line]]] = [[] for _ in self.days]
        self.load = [0] * len(self.days)
        self.questions: List[Dict[str, Any]] = []  # Question fields, with planted lines in place of ids
        self.relative: List[Tuple[_Line, str, Optional[datetime.date], Optional[datetime.date]]] = []
        self.entities: List[Tuple[str, str]] = []
        self.dated: List[datetime.date] = []  # single days already planted (kept distinct)
        self.unused: Dict[str, List[str]] = {}  # small-talk templates not yet used, per kind

    # drawing words and sessions

    def draw(self, pool: str) -> Any:
        """A word from a list, never the same one twice for this user."""
        if pool not in self.pools:
            words = list(self.word_list(pool))
            self.rng.shuffle(words)
            self.pools[pool] = words
        if not self.pools[pool]:
            raise ValueError("word list %r exhausted for %s" % (pool, self.user_id))
        return self.pools[pool].pop()

    def word_list(self, pool: str) -> List[Any]:
        return WORDS[self.lang][pool]

    def _session_dates(self) -> Tuple[List[datetime.date], List[int]]:
        day = FIRST_DAY + self.rng.randint(0, (self.last_start_day - FIRST_DAY).days) * DAY
        days, stamps = [], []
        for i in range(SESSIONS_PER_USER):
            if i:
                day += self.rng.randint(*self.gap_days) * DAY
            moment = datetime.datetime(day.year, day.month, day.day, self.rng.randint(8, 21), self.rng.randint(0, 59),
                                       tzinfo=datetime.timezone.utc)
            days.append(day)
            stamps.append(int(moment.timestamp()) * 1000)
        return days, stamps

    def session(self, lo: int = 0, hi: Optional[int] = None, avoid: Sequence[int] = ()) -> int:
        """A session in [lo, hi] among the least loaded ones, chosen at random."""
        hi = len(self.days) - 1 if hi is None else hi
        candidates = [s for s in range(lo, hi + 1) if s not in avoid] or list(range(lo, hi + 1))
        least = min(self.load[s] for s in candidates)
        return self.rng.choice([s for s in candidates if self.load[s] <= least + 1])

    def speakers(self) -> Tuple[int, int]:
        me = self.rng.randrange(2)
        return me, 1 - me

    def values(self, me: int, slots: Dict[Any, str]) -> Dict[str, Any]:
        v: Dict[str, Any] = {"me": self.names[me], "you": self.names[1 - me]}
        for slot, pool in slots.items():
            word = self.draw(pool)
            if isinstance(slot, tuple):
                v.update(zip(slot, word))
            else:
                v[slot] = word
        return v

    # placing turns and questions

    def line(self, speaker: int, template: str, v: Dict[str, Any]) -> _Line:
        return _Line(speaker, self.polish(template.format(**v)))

    def polish(self, text: str) -> str:
        """English articles agree with the word that follows ("an architect")."""
        return re.sub(r"\b([Aa]) (?=[AEIOaeio])", r"\1n ", text) if self.lang == "en" else text

    def place(self, session: int, lines: List[_Line]) -> None:
        self.blocks[session].append(lines)
        self.load[session] += len(lines)

    def place_with_reaction(self, session: int, line: _Line, reaction: Optional[str], v: Dict[str, Any]) -> None:
        """The fact, sometimes followed by the other speaker's reply (which is not evidence)."""
        if reaction and self.rng.random() < REACTION_SHARE:
            self.place(session, [line, self.line(1 - line.speaker, reaction, v)])
        else:
            self.place(session, [line])

    def place_near(self, templates: Sequence[str], you: int, v: Dict[str, Any], avoid: Sequence[int],
                   lo: int = 0) -> None:
        """Distractors said by `you`, from session `lo` on, in other sessions than `avoid`."""
        for template in templates:
            self.place(self.session(lo, avoid=avoid), [self.line(you, template, v)])

    def ask(self, category: str, question: str, gold: List[_Line], answer: str,
            options: Optional[List[str]] = None, labels: Optional[Dict[str, Any]] = None) -> str:
        qid = "%s/q%03d" % (self.user_id, len(self.questions) + 1)
        self.questions.append({"qid": qid, "question": question, "category": category, "gold": gold,
                               "answer": answer, "options": options, "labels": labels})
        return qid

    def register(self, kind: str, name: str) -> None:
        if (kind, name) not in self.entities:
            self.entities.append((kind, name))


class _HardUser(_User):
    """A user of the harder groups: sessions over several months, and that module's word lists too."""

    last_start_day, gap_days = HARD_LAST_START_DAY, HARD_GAP_DAYS

    def word_list(self, pool: str) -> List[Any]:
        return synthetic_hard.WORDS[self.lang].get(pool) or WORDS[self.lang][pool]


# -- the categories ------------------------------------------------------------------

def _plant_single_hop(u: _User, kind: Dict[str, Any], paraphrase: bool) -> None:
    me, you = u.speakers()
    v = u.values(me, kind["slots"])
    t = kind[u.lang]
    s = u.session()
    evidence = u.line(me, t["say"], v)
    u.place(s, [evidence])
    answer = str(v[kind["answer"]])
    qid = u.ask("single-hop", t["ask"].format(**v), [evidence], answer)
    if paraphrase:
        u.ask("paraphrase", t["para"].format(**v), [evidence], answer, labels={"plain_qid": qid})
    u.place_near(t.get("near", []), you, v, avoid=[s])
    if "entity" in kind:
        u.register(kind["entity"][0], v[kind["entity"][1]])


def _plant_multi_session(u: _User, kind: Dict[str, Any]) -> None:
    me, you = u.speakers()
    v = u.values(me, kind["slots"])
    t = kind[u.lang]
    first_s = u.session(0, len(u.days) - 3)
    second_s = u.session(first_s + 1)
    first, second = u.line(me, t["first"], v), u.line(me, t["second"], v)
    u.place(first_s, [first])
    u.place(second_s, [second])
    u.ask("multi-session", t["ask"].format(**v), [first, second], str(v[kind["answer"]]))
    u.place_near(t.get("near", []), you, v, avoid=[first_s, second_s], lo=first_s + 1)
    for key in ("entity", "entity2"):
        if key in kind:
            u.register(kind[key][0], v[kind[key][1]])


def _wedding_dates(u: _User, new_s: int) -> Tuple[datetime.date, datetime.date]:
    """Dates after the session that postpones them; the new one after every session."""
    old = u.days[new_s] + u.rng.randint(3, 30) * DAY
    new = max(old, u.days[-1]) + u.rng.randint(7, 40) * DAY
    return old, new


def _date_words(lang: str, day: datetime.date) -> str:
    if lang == "zh":
        return "%d月%d日" % (day.month, day.day)
    return "%d %s" % (day.day, EN_MONTHS[day.month - 1])


def _plant_knowledge_update(u: _User, kind: Dict[str, Any]) -> None:
    me, _ = u.speakers()
    v = u.values(me, kind["slots"])
    t = kind[u.lang]
    half = len(u.days) // 2
    old_s = u.session(0, half - 1)
    new_s = u.session(old_s + 2)
    if kind["pool"] == "date":
        old_day, new_day = _wedding_dates(u, new_s)
        v["old"], v["new"] = _date_words(u.lang, old_day), _date_words(u.lang, new_day)
        answer = new_day.isoformat()
    else:
        v["old"], v["new"] = u.draw(kind["pool"]), u.draw(kind["pool"])
        answer = v["new"]
    old, new = u.line(me, t["old"], v), u.line(me, t["new"], v)
    u.place(old_s, [old])
    u.place(new_s, [new])
    u.ask("knowledge-update", t["ask"].format(**v), [new, old], answer,
          labels={"new": [new], "old": [old]})
    if "entity" in kind:
        u.register(kind["entity"][0], v[kind["entity"][1]])


def _pick_relative(u: _User, tense: str, day: datetime.date) -> Tuple[str, datetime.date, datetime.date]:
    """A relative expression for an event in the past or future of `day`, and its dates."""
    forms = [f for f in RELATIVE_FORMS[u.lang][tense] if f != "this weekend" or day.weekday() < 4]
    form = u.rng.choice(forms)
    n = 0
    if form in ("days_ago", "in_days"):
        n = u.rng.randint(2, 6)
    elif form == "weeks_ago":
        n = u.rng.randint(2, 3)
    elif form.endswith("weekday"):
        n = u.rng.randrange(7)
    start, end = resolve_relative(form, day, n)
    return relative_text(u.lang, form, n), start, end


def _plant_temporal_relative(u: _User, events: Dict[str, List[Tuple[str, str, str]]]) -> None:
    tense = "past" if u.rng.random() < PAST_SHARE else "future"
    say, question, reaction = events[tense].pop()
    me, _ = u.speakers()
    s = u.session()
    expr, start, end = _pick_relative(u, tense, u.days[s])
    v = dict(u.values(me, {}), expr=expr)
    evidence = u.line(me, say, v)
    u.place_with_reaction(s, evidence, reaction, v)
    u.relative.append((evidence, expr, start, end))
    if start == end:
        u.dated.append(start)
    u.ask("temporal-relative", question.format(**v), [evidence], _span_answer(start, end))


def _plant_relative_filler(u: _User, tense: str) -> None:
    me, _ = u.speakers()
    s = u.session()
    template = u.rng.choice(RELATIVE_FILLER[u.lang][tense])
    if tense == "vague":
        expr, start, end = u.rng.choice(VAGUE_EXPRESSIONS[u.lang]), None, None
    else:
        expr, start, end = _pick_relative(u, tense, u.days[s])
        if start == end:
            u.dated.append(start)
    line = u.line(me, template, dict(u.values(me, {}), expr=expr))
    u.place(s, [line])
    u.relative.append((line, expr, start, end))


def _absolute_date(u: _User, form: str, session_day: datetime.date) -> Tuple[str, str, str, bool]:
    """(as written in the evidence, as written in a question, answer, single day?) for a past date."""
    lang = u.lang
    if form == "month" and session_day.month == 1:
        form = "year"
    if form == "year":
        year = session_day.year - 1
        text = "%d年" % year if lang == "zh" else "in %d" % year
        return text, text, _span_answer(datetime.date(year, 1, 1), datetime.date(year, 12, 31)), False
    if form == "month":
        month = u.rng.randint(1, session_day.month - 1)
        start, end = _month_span(session_day.year, month)
        if lang == "zh":
            return "%d月份" % month, "%d年%d月" % (session_day.year, month), _span_answer(start, end), False
        return "in %s" % EN_MONTHS[month - 1], "in %s %d" % (EN_MONTHS[month - 1], session_day.year), \
            _span_answer(start, end), False
    day = _past_day(u, form, session_day)
    long_en = "%d %s %d" % (day.day, EN_MONTHS[day.month - 1], day.year)
    long_zh = "%d年%d月%d日" % (day.year, day.month, day.day)
    if lang == "zh":
        text = {"dmy": "在" + long_zh, "md": "%d月%d日那天" % (day.month, day.day),
                "iso": "%s那天" % day.isoformat()}[form]
        return text, long_zh, day.isoformat(), True
    text = {"dmy": "on " + long_en, "md": "on %s %s" % (EN_MONTHS[day.month - 1], _ordinal(day.day)),
            "iso": "on " + day.isoformat(), "us": "on %d/%d/%d" % (day.month, day.day, day.year)}[form]
    return text, "on " + long_en, day.isoformat(), True


def _past_day(u: _User, form: str, session_day: datetime.date) -> datetime.date:
    """A day 5..150 days before the session: same year for forms without a year, day > 12
    for M/D/YYYY, and never a day another planted event already has."""
    earliest = datetime.date(session_day.year, 1, 1) if form == "md" else session_day - 150 * DAY
    latest = session_day - 5 * DAY
    if latest < earliest:
        earliest = latest - 20 * DAY  # an early-January session: let the date fall in the previous year
    span = (latest - earliest).days
    offset = u.rng.randint(0, span)
    for step in range(span + 1):
        day = earliest + ((offset + step) % (span + 1)) * DAY
        if day not in u.dated and (form != "us" or day.day > 12) and (form != "md" or day.year == session_day.year):
            u.dated.append(day)
            return day
    raise ValueError("no free day before %s" % session_day)


def _ordinal(n: int) -> str:
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return "%d%s" % (n, suffix)


def _plant_temporal_absolute(u: _User, events: List[Tuple[str, str, str]], form: str) -> None:
    verb, when_q, event = events.pop()
    me, _ = u.speakers()
    s = u.session()
    form_used = form if not (form == "md" and u.days[s] < datetime.date(u.days[s].year, 1, 10)) else "dmy"
    text, asked, answer, single_day = _absolute_date(u, form_used, u.days[s])
    v = dict(u.values(me, {}), verb=verb, date=text, comment=u.rng.choice(ABSOLUTE_COMMENTS[u.lang]))
    evidence = u.line(me, ABSOLUTE_SAY[u.lang], v)
    u.place(s, [evidence])
    if single_day and u.rng.random() < 0.5:
        u.ask("temporal-absolute", ABSOLUTE_WHAT[u.lang].format(me=v["me"], date=asked), [evidence], event)
    else:
        u.ask("temporal-absolute", when_q.format(**v), [evidence], answer)


def _plant_multiple_choice(u: _User, kind: Dict[str, Any]) -> None:
    me, _ = u.speakers()
    v = u.values(me, kind["slots"])
    t = kind[u.lang]
    v["x"] = u.draw(kind["pool"])
    wrong = [u.draw(kind["pool"]) for _ in range(u.rng.randint(2, 4))]
    s = u.session()
    evidence = u.line(me, t["say"], v)
    u.place(s, [evidence])
    mentions = u.rng.sample(t["mention"], len(t["mention"]))
    for i, x in enumerate(wrong):
        mention = mentions[i % len(mentions)]
        u.place(u.session(avoid=[s]), [u.line(me if mention.startswith("{me}") else 1 - me, mention, dict(v, x=x))])
    options = list(wrong)
    options.insert(u.rng.randint(0, len(wrong)), v["x"])
    u.ask("multiple-choice", t["ask"].format(**v), [evidence], v["x"], options=options)
    if "entity" in kind:
        u.register(kind["entity"][0], v[kind["entity"][1]])


def _plant_entity_mentions(u: _User) -> None:
    """One distractor per registered entity: it names the entity and states nothing about it."""
    for kind, name in u.entities:
        me, _ = u.speakers()
        template = u.rng.choice(ENTITY_MENTIONS[u.lang][kind])
        u.place(u.session(), [u.line(me, template, dict(u.values(me, {}), x=name))])


def _plant_unanswerable(u: _User, count: int) -> List[Tuple[str, str]]:
    """Unanswerable questions on registered entities; gold is filled in once turns have ids."""
    picks = u.rng.sample(u.entities, min(count, len(u.entities)))
    asked = []
    for kind, name in picks:
        question = u.rng.choice(UNANSWERABLE[u.lang][kind]).format(x=name)
        u.ask("unanswerable", question, [], UNANSWERABLE_ANSWER[u.lang], labels={"unanswerable": True})
        asked.append((kind, name))
    return asked


# -- sessions ------------------------------------------------------------------------

SMALL_TALK = {"greeting": GREETINGS, "farewell": FAREWELLS, "filler": FILLER}


def _filler_text(u: _User, speaker: int, kind: str) -> str:
    """Small talk: each template once per user before any repeats (then a new round)."""
    if not u.unused.get(kind):
        templates = SMALL_TALK[kind][u.lang]
        u.unused[kind] = u.rng.sample(templates, len(templates))
    template = u.unused[kind].pop()
    words = {k: u.rng.choice(vs) for k, vs in FILLER_WORDS[u.lang].items()}
    return u.polish(template.format(me=u.names[speaker], you=u.names[1 - speaker], **words))


def _skeleton(order: List[Optional[List[_Line]]]) -> List[Any]:
    """Turn slots: planted lines in order, a filler marker (its speaker) wherever alternation needs one."""
    slots: List[Any] = [0]  # the greeting, by A
    for item in order:
        speaker = len(slots) % 2
        if item is None:
            slots.append(speaker)
            continue
        if item[0].speaker != speaker:
            slots.append(speaker)
        slots.extend(item)
    return slots


def _assemble(u: _User, s: int) -> List[_Line]:
    blocks = u.blocks[s]
    planted = sum(len(b) for b in blocks)
    target = u.rng.randint(MIN_TURNS, MAX_TURNS)
    order: List[Optional[List[_Line]]] = list(blocks) + [None] * max(0, target - 2 - planted)
    u.rng.shuffle(order)
    slots = _skeleton(order)
    while len(slots) + 1 > MAX_TURNS and None in order:
        order.remove(None)
        slots = _skeleton(order)
    while len(slots) + 1 < MIN_TURNS:
        slots.append(len(slots) % 2)
    slots.append(len(slots) % 2)  # the farewell
    if len(slots) > MAX_TURNS:
        raise ValueError("session %d of %s has %d turns" % (s + 1, u.user_id, len(slots)))
    lines = []
    for i, slot in enumerate(slots):
        if isinstance(slot, _Line):
            lines.append(slot)
            continue
        kind = "greeting" if i == 0 else "farewell" if i == len(slots) - 1 else "filler"
        lines.append(_Line(slot, _filler_text(u, slot, kind)))
    return lines


def _mentions(lang: str, name: str, text: str) -> bool:
    if lang == "zh":
        return name in text
    return re.search(r"(?<![A-Za-z])%s(?![A-Za-z])" % re.escape(name), text) is not None


# -- a user, a dataset -------------------------------------------------------------------

def _user(lang: str, number: int, seed: int) -> Conversation:
    user_id = "syn-%s-%02d" % (lang, number)
    u = _User(lang, user_id, random.Random(seed * 100003 + number + (500 if lang == "zh" else 0)))
    for i, kind in enumerate(u.rng.sample(SINGLE_HOP, PLAN["single-hop"])):
        _plant_single_hop(u, kind, paraphrase=i < PLAN["paraphrase"])
    for case in u.rng.sample(MULTI_SESSION, PLAN["multi-session"]):
        _plant_multi_session(u, case)
    for kind in u.rng.sample(KNOWLEDGE_UPDATE, PLAN["knowledge-update"]):
        _plant_knowledge_update(u, kind)
    events = {tense: u.rng.sample(lst, len(lst)) for tense, lst in RELATIVE_EVENTS[lang].items()}
    for _ in range(PLAN["temporal-relative"]):
        _plant_temporal_relative(u, events)
    for _ in range(u.rng.randint(*FILLER_RELATIVE)):
        _plant_relative_filler(u, "past" if u.rng.random() < PAST_SHARE else "future")
    for _ in range(FILLER_VAGUE):
        _plant_relative_filler(u, "vague")
    absolute = u.rng.sample(ABSOLUTE_EVENTS[lang], len(ABSOLUTE_EVENTS[lang]))
    forms = u.rng.sample(ABSOLUTE_FORMS[lang], PLAN["temporal-absolute"])
    for form in forms:
        _plant_temporal_absolute(u, absolute, form)
    for kind in u.rng.sample(MULTIPLE_CHOICE, PLAN["multiple-choice"]):
        _plant_multiple_choice(u, kind)
    _plant_entity_mentions(u)
    unanswerable = _plant_unanswerable(u, PLAN["unanswerable"])
    return _finish(u, unanswerable)


def _hard_user(lang: str, number: int, seed: int) -> Conversation:
    """A user with only the harder groups (synthetic_hard.py) and two vague filler expressions."""
    user_id = "syn-%s-%02d" % (lang, number)
    u = _HardUser(lang, user_id, random.Random(seed * 100003 + number + (500 if lang == "zh" else 0)))
    synthetic_hard.plant_all(u)
    for _ in range(FILLER_VAGUE):
        _plant_relative_filler(u, "vague")
    return _finish(u, [])


def _finish(u: _User, unanswerable: List[Tuple[str, str]]) -> Conversation:
    """Assemble the sessions, give turns their ids, and turn planted lines into ids."""
    sessions = []
    all_lines: List[_Line] = []
    for s in range(len(u.days)):
        lines = _assemble(u, s)
        turns = []
        for i, line in enumerate(lines):
            assert line.speaker == i % 2, "speakers must alternate"
            line.turn_id = "S%d:%d" % (s + 1, i + 1)
            turns.append(Turn(line.turn_id, "user" if i % 2 == 0 else "assistant", line.text, u.stamps[s]))
            all_lines.append(line)
        sessions.append(Session("%s/s%02d" % (u.user_id, s + 1), turns))
    names = iter(unanswerable)
    questions = []
    for q in u.questions:
        ids = [line.turn_id for line in q["gold"]]
        labels = q["labels"]
        if q["category"] == "unanswerable":
            _, name = next(names)
            ids = [line.turn_id for line in all_lines if _mentions(u.lang, name, line.text)]
        elif labels and "new" in labels:  # knowledge-update and update-cue questions
            labels = {"new": [labels["new"][0].turn_id], "old": [labels["old"][0].turn_id]}
        questions.append(Question(q["qid"], q["question"], q["category"], ids, q["answer"], q["options"], labels))
    position = {line.turn_id: i for i, line in enumerate(all_lines)}
    relative = sorted(u.relative, key=lambda r: position[r[0].turn_id])
    relative_times = [{"turn_id": line.turn_id, "expression": expr,
                       "start": start.isoformat() if start else None, "end": end.isoformat() if end else None}
                      for line, expr, start, end in relative]
    return Conversation(u.user_id, sessions, questions, u.lang, relative_times)


def generate(seed: int = 1, size: str = "small") -> Dataset:
    """The synthetic suite for `seed` and `size` ("small" or "medium"); the same every time."""
    if size not in SIZES:
        raise ValueError("size must be one of %s" % ", ".join(SIZES))
    conversations = [_user(lang, n, seed) for lang, count in SIZES[size].items() for n in range(1, count + 1)]
    conversations += [_hard_user(lang, HARD_FIRST + n, seed) for lang, count in HARD_SIZES[size].items()
                      for n in range(count)]
    return Dataset("synthetic-%s-seed%d" % (size, seed), conversations, [])


def dumps(dataset: Dataset) -> str:
    """The suite's JSON text, exactly as tools/synthetic.py writes it."""
    return json.dumps(to_json(dataset), ensure_ascii=False, indent=1, sort_keys=False) + "\n"
