"""Harder question groups for the synthetic suite: wording, spelling, periods, state changes.

tools/evalkit/synthetic/ appends users built from these groups (ids `syn-en-51`,
`syn-zh-51`, ...) after its own users, so the questions of the original users stay
byte-identical and their figures comparable. The groups, each in English and Chinese,
were written as users phrase things, without looking at flowmem's cue lists:

- `paraphrase` (more cases): the question names the evidence's fact with other words:
  a synonym (bike/bicycle), a derivation (married/wedding, allergy/allergic) or a
  category word (pet for a greyhound, boss for a manager); labels = {"relation": ...}.
- `typo`: the question misspells its key words ("resturant", "alergic"; Chinese
  homophones typed with the wrong character: 过明 for 过敏); gold = the evidence turn.
- `period`: the question is scoped to a month, the first week or the end of a month,
  or a season; the evidence is dated inside that period (its session's date) and says
  nothing about time; two distractors with the same words are dated outside it.
  labels = {"period": [start, end], "form": ...}.
- `update-cue`: a state said in an early session and changed in a later one with
  everyday cues ("I work at X now", "my new number is", "these days", "quit", "not
  ... anymore"; 现在在, 换号了, 这阵子, 戒了, 不…了); gold = [new, old] and labels
  {"new", "old"}, as knowledge-update questions have.

The planting functions take the suite's user under construction (synthetic/user.py) (`u`: draw,
speakers, values, session, line, place, ask, days) and use only its generator.
"""
from __future__ import annotations

import datetime
from typing import Any, Dict, List, Sequence, Tuple

PLAN = {"paraphrase": 10, "typo": 8, "period": 6, "update-cue": 8}

WORDS: Dict[str, Dict[str, List[Any]]] = {
    "en": {
        "baked": ["a lemon drizzle cake", "cinnamon rolls", "a cherry pie", "oat cookies", "a carrot cake",
                  "brownies", "a plum tart"],
        "film": ["Midnight Ferry", "The Long Meadow", "Signal Lost", "Paper Moons", "Harbour Lights", "Ash and Ivy"],
        "getaway": ["Whitby", "St Ives", "Bath", "Rye", "Hay-on-Wye", "Portmeirion", "Tenby"],
        "purchase": ["a new kettle", "a rain jacket", "running shoes", "a standing desk", "a toaster",
                     "a bread maker", "noise-cancelling headphones"],
        "novel": ["The Lighthouse Keeper", "Salt and Stone", "Every Small Hour", "The Glass Orchard",
                  "A Year of Rivers", "The Night Garden"],
        "band": ["The Paper Kites", "Velvet Static", "Northern Tides", "The Lanterns", "Blue Atlas", "Coral Drive"],
        "shop": ["bakery", "laundrette", "florist", "pharmacy", "barber shop", "noodle bar"],
        "gym": ["FitHub", "Iron Temple", "Pulse Gym", "The Body Lab", "CoreZone", "Peak Fitness"],
        "phone": ["07700 900461", "07700 900982", "07700 900217", "07700 900735", "07700 900348"],
        "exercise": ["swimming", "yoga", "running", "rowing", "pilates", "cycling"],
        "commute": ["bus", "train", "tram", "ferry", "scooter"],
        "evening_drink": ["red wine", "beer", "cider", "whisky"],
        "soft_drink": ["sparkling water", "herbal tea", "lemonade", "kombucha"],
        "kid_craze": ["dinosaurs", "Lego", "space rockets", "football cards", "magic tricks"],
        "illness": ["the flu", "chickenpox", "tonsillitis", "a chest infection"],
    },
    "zh": {
        "baked": ["柠檬蛋糕", "肉桂卷", "樱桃派", "燕麦饼干", "胡萝卜蛋糕", "布朗尼", "李子挞"],
        "film": ["《午夜渡轮》", "《长长的草地》", "《信号消失》", "《纸月亮》", "《港口灯火》", "《灰与藤》"],
        "getaway": ["乌镇", "周庄", "平遥", "凤凰古城", "丽江", "阳朔", "婺源"],
        "purchase": ["一个新水壶", "一件雨衣", "一双跑鞋", "一张升降桌", "一台烤面包机", "一台面包机", "一副降噪耳机"],
        "novel": ["《守灯人》", "《盐与石》", "《每个小时》", "《玻璃果园》", "《河流之年》", "《夜的花园》"],
        "band": ["纸风筝乐队", "丝绒静电", "北方潮汐", "灯笼乐队", "蓝色地图", "珊瑚大道"],
        "shop": ["面包店", "洗衣店", "花店", "药店", "理发店", "面馆"],
        "gym": ["动感健身", "铁馆", "脉搏健身", "塑形工坊", "核心健身", "巅峰健身"],
        "phone": ["13912345678", "13807654321", "13655512345", "15000123456", "18611112222"],
        "exercise": ["游泳", "练瑜伽", "跑步", "划船", "练普拉提", "骑车"],
        "commute": ["公交", "地铁", "轻轨", "轮渡", "班车"],
        "evening_drink": ["啤酒", "红酒", "白酒", "米酒"],
        "soft_drink": ["花茶", "热牛奶", "蜂蜜水", "柠檬水"],
        "kid_craze": ["恐龙", "乐高", "火箭", "奥特曼卡片", "魔术"],
        "illness": ["流感", "水痘", "扁桃体炎", "支气管炎"],
    },
}

# -- paraphrase: (relation, slots, answer slot, evidence, question) per language ------

PARAPHRASES = [
    {"relation": "married/wedding", "slots": {"person": "person", "city": "city"}, "answer": "city",
     "en": ("{me}: My sister {person} got married at a vineyard just outside {city}.",
            "Where was {person}'s wedding held?"),
     "zh": ("{me}：我姐姐{person}是在{city}郊外的一个葡萄园结的婚。", "{person}的婚礼是在哪里办的？")},
    {"relation": "greyhound/pet", "slots": {"pet": "pet"}, "answer": "pet",
     "en": ("{me}: We adopted a retired greyhound, she's called {pet}.", "What's the name of {me}'s pet?"),
     "zh": ("{me}：我们领养了一只退役的灵缇犬，名字叫{pet}。", "{me}的宠物叫什么？")},
    {"relation": "boss/manager", "slots": {"person": "person"}, "answer": "person",
     "en": ("{me}: My boss {person} lets me work from home on Fridays.", "Who is {me}'s manager?"),
     "zh": ("{me}：我老板{person}同意我周五在家办公。", "{me}的上司是谁？")},
    {"relation": "bike/bicycle", "slots": {"venue": "venue"}, "answer": "venue",
     "en": ("{me}: Someone nicked my bike from outside the {venue}.", "Where was {me}'s bicycle stolen?"),
     "zh": ("{me}：我的单车在{venue}门口被人偷了。", "{me}的自行车是在哪儿丢的？")},
    {"relation": "allergy/allergic", "slots": {"allergen": "allergen"}, "answer": "allergen",
     "en": ("{me}: I have a {allergen} allergy, so eating out is a bit of a minefield.",
            "Which food is {me} allergic to?"),
     "zh": ("{me}：我有{allergen}过敏症，在外面吃饭得特别小心。", "{me}碰不得哪种食物？")},
    {"relation": "car/vehicle", "slots": {"person": "person"}, "answer": "person",
     "en": ("{me}: I finally sold my old car to {person} from down the road.", "Who bought {me}'s vehicle?"),
     "zh": ("{me}：我终于把旧车卖给了住在附近的{person}。", "{me}的那辆汽车卖给谁了？")},
    {"relation": "doctor/physician", "slots": {"person": "person"}, "answer": "person",
     "en": ("{me}: My doctor, {person}, told me to cut down on salt.", "What is the name of {me}'s physician?"),
     "zh": ("{me}：给我看病的大夫是{person}，让我少吃盐。", "{me}的医生叫什么名字？")},
    {"relation": "flat/apartment, above/below", "slots": {"shop": "shop"}, "answer": "shop",
     "en": ("{me}: Our new flat is right above a {shop}.", "What is downstairs from {me}'s apartment?"),
     "zh": ("{me}：我们新租的房子楼下就是一家{shop}。", "{me}住的公寓下面是什么店？")},
    {"relation": "ran a marathon/race", "slots": {"city": "city"}, "answer": "city",
     "en": ("{me}: I ran the {city} marathon in just under four hours.", "Which race did {me} complete?"),
     "zh": ("{me}：我跑完了{city}马拉松，用时不到四个小时。", "{me}参加并完成了哪场比赛？")},
    {"relation": "kids/children", "slots": {"craze": "kid_craze"}, "answer": "craze",
     "en": ("{me}: My kids are completely obsessed with {craze}.", "What are {me}'s children really into?"),
     "zh": ("{me}：我家小朋友对{craze}简直着了迷。", "{me}的孩子特别喜欢什么？")},
    {"relation": "works for/employer", "slots": {"company": "company"}, "answer": "company",
     "en": ("{me}: I work for {company}, mostly on the support side.", "Who is {me}'s employer?"),
     "zh": ("{me}：我在{company}上班，主要做客服这块。", "{me}的雇主是哪家公司？")},
    {"relation": "ill/sickness", "slots": {"illness": "illness"}, "answer": "illness",
     "en": ("{me}: I was ill with {illness} and stayed in bed for days.", "What sickness did {me} have?"),
     "zh": ("{me}：我得了{illness}，在床上躺了好几天。", "{me}生了什么病？")},
]

# -- typo: (evidence, question with misspellings, near line sharing the other words) -

TYPOS = [
    {"slots": {"instrument": "instrument"}, "answer": "instrument",
     "en": ("{me}: I've been learning the {instrument} for about a year now.", "Which instrumnet is {me} lerning?",
            "{me}: I've been learning to bake bread for about a year now."),
     "zh": ("{me}：我在学{instrument}，已经学了一年左右。",
            "{me}在学什么乐气？",
            "{me}：我在学做面包，已经学了一年左右。")},
    {"slots": {"restaurant": "restaurant"}, "answer": "restaurant",
     "en": ("{me}: My favourite restaurant is {restaurant}, we go every Friday.",
            "What is {me}'s favorite resturant?", "{me}: My favourite podcast comes out every Friday."),
     "zh": ("{me}：我最喜欢的餐厅是{restaurant}，每周五都去。", "{me}最喜欢的参厅是哪家？",
            "{me}：我最喜欢的播客每周五更新。")},
    {"slots": {"allergen": "allergen"}, "answer": "allergen",
     "en": ("{me}: I'm allergic to {allergen}, even a tiny bit makes me sick.", "What is {me} alergic to?",
            "{me}: Even a tiny bit of rain makes my hair frizzy."),
     "zh": ("{me}：我对{allergen}过敏，一点都不能碰。", "{me}对什么过明？", "{me}：我对数字不敏感，一点都记不住。")},
    {"slots": {"person": "person", "job": "job"}, "answer": "job",
     "en": ("{me}: My neighbour {person} works as a {job} at the hospital.",
            "What does {me}'s nieghbour {person} do at the hopsital?",
            "{me}: {person} waved at me from the bus this morning."),
     "zh": ("{me}：我邻居{person}在医院当{job}。",
            "{me}的邻局{person}在医院做什么？",
            "{me}：今早{person}在公交上跟我挥手。")},
    {"slots": {"pet": "pet"}, "answer": "pet",
     "en": ("{me}: We named the kitten {pet}, after my nan's old cat.", "What did {me} call the kiten?",
            "{me}: My nan's old house finally sold."),
     "zh": ("{me}：我们给小猫取名叫{pet}，跟我外婆以前那只猫一样。", "{me}给小帽取了什么名字？",
            "{me}：我外婆以前的房子终于卖掉了。")},
    {"slots": {"hotel": "hotel"}, "answer": "hotel",
     "en": ("{me}: The wedding reception will be at the {hotel}.", "Where is the wedding recepton going to be?",
            "{me}: The wedding photographer cancelled on us."),
     "zh": ("{me}：婚宴定在{hotel}办。", "婚燕定在哪里办？", "{me}：婚礼的摄影师临时放了我们鸽子。")},
    {"slots": {"city": "city"}, "answer": "city",
     "en": ("{me}: I'm saving up for a trip to {city}, it's been my dream for years.",
            "Where is {me} savng up to travle to?", "{me}: I'm saving up for a new laptop."),
     "zh": ("{me}：我在存钱，想去{city}旅行，这是我多年的梦想。",
            "{me}存钱想去哪里旅形？",
            "{me}：我在存钱买新电脑。")},
    {"slots": {"sport": "sport"}, "answer": "sport",
     "en": ("{me}: My brother's favourite sport is {sport}, he plays it every weekend.",
            "What sprot does {me}'s brohter like best?", "{me}: My favourite podcast is about old films."),
     "zh": ("{me}：我哥最喜欢的运动是{sport}，每个周末都打。",
            "{me}的哥哥最喜欢什么运东？",
            "{me}：我哥每个周末都去钓鱼。")},
]

# -- period: an activity said with generic words; the question names when ------------

PERIOD_KINDS = [
    {"pool": "baked", "en": ("{me}: I baked {x} for the office, it was gone in minutes.", "What did {me} bake {when}?"),
     "zh": ("{me}：我给同事烤了{x}，一会儿就被抢光了。", "{me}{when}烤了什么？")},
    {"pool": "film", "en": ("{me}: We saw {x} at the cinema, the sound was incredible.",
                            "Which film did {me} see at the cinema {when}?"),
     "zh": ("{me}：我们去电影院看了{x}，音效太震撼了。", "{me}{when}在电影院看了哪部电影？")},
    {"pool": "getaway", "en": ("{me}: We had a weekend away in {x}, such a charming place.",
                               "Where did {me} go for a weekend away {when}?"),
     "zh": ("{me}：周末我们去{x}玩了两天，那里特别有味道。", "{me}{when}周末去哪儿玩了？")},
    {"pool": "purchase", "en": ("{me}: I bought {x}, the old one was falling apart.", "What did {me} buy {when}?"),
     "zh": ("{me}：我买了{x}，旧的已经不行了。", "{me}{when}买了什么？")},
    {"pool": "novel", "en": ("{me}: I just finished reading {x}, I couldn't put it down.",
                             "Which book did {me} finish {when}?"),
     "zh": ("{me}：我刚读完{x}，一口气看完的。", "{me}{when}读完了哪本书？")},
    {"pool": "band", "en": ("{me}: I went to see {x} play live, the crowd was amazing.",
                            "Which band did {me} see live {when}?"),
     "zh": ("{me}：我去看了{x}的现场，气氛太好了。", "{me}{when}去看了哪个乐队的现场？")},
]
PERIOD_FORMS = ("month", "first-week", "end-of-month", "season")
EN_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
             "November", "December"]
ZH_MONTHS = ["一", "二", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二"]
SEASONS = {12: "winter", 1: "winter", 2: "winter", 3: "spring", 4: "spring", 5: "spring", 6: "summer", 7: "summer",
           8: "summer", 9: "autumn", 10: "autumn", 11: "autumn"}
WHEN = {
    "en": {"month": ["in {month}", "during {month}", "back in {month}"],
           "first-week": ["in the first week of {month}", "during the first week of {month}"],
           "end-of-month": ["at the end of {month}", "in late {month}"],
           "season": {"winter": ["during the winter", "over the winter"], "spring": ["in the spring", "in spring"],
                      "summer": ["over the summer", "in the summer"], "autumn": ["in the autumn", "in the fall"]}},
    "zh": {"month": ["{m}月", "{m}月份", "{cm}月份"], "first-week": ["{m}月第一周", "{m}月初"],
           "end-of-month": ["{m}月底", "{m}月下旬"],
           "season": {"winter": ["冬天", "冬天的时候"], "spring": ["春天", "开春的时候"],
                      "summer": ["夏天", "夏天的时候"], "autumn": ["秋天", "秋天的时候"]}},
}

# -- update-cue: an old state, then a new one said with an everyday cue --------------

UPDATES = [
    {"old_pool": "company", "new_pool": "company",
     "en": ("{me}: I've been at {old} for three years, it's a good place.",
            "{me}: I work at {new} now, started on Monday.",
            "Where does {me} work?"),
     "zh": ("{me}：我在{old}干了三年了，环境挺好。", "{me}：我现在在{new}上班，周一刚入职。", "{me}在哪家公司工作？")},
    {"old_pool": "phone", "new_pool": "phone",
     "en": ("{me}: You can always reach me on {old}.", "{me}: My new number is {new}, the old one is dead.",
            "What is {me}'s phone number?"),
     "zh": ("{me}：有事打我电话{old}。", "{me}：我换号了，新号码是{new}，原来那个停用了。", "{me}的电话号码是多少？")},
    {"old_pool": "exercise", "new_pool": "exercise",
     "en": ("{me}: Most mornings I do {old} before work.", "{me}: These days I mostly do {new} in the mornings.",
            "What exercise does {me} do in the mornings?"),
     "zh": ("{me}：我每天早上上班前都去{old}。", "{me}：这阵子我早上一般去{new}。", "{me}早上做什么运动？")},
    {"old_pool": "instrument", "new_pool": "instrument",
     "en": ("{me}: I play the {old} in a covers band on Thursdays.",
            "{me}: I quit the band, I'm teaching myself the {new} now.", "What instrument does {me} play?"),
     "zh": ("{me}：我在乐队里弹{old}，每周四排练。",
            "{me}：乐队我退出了，现在自己在学{new}。",
            "{me}现在玩什么乐器？")},
    {"old_pool": "commute", "new_pool": "commute",
     "en": ("{me}: I take the {old} to the office every day.",
            "{me}: I started taking the {new} to work, way less stress.",
            "How does {me} get to work?"),
     "zh": ("{me}：我每天坐{old}去公司。", "{me}：我上班开始坐{new}了，舒服多了。", "{me}怎么去上班？")},
    {"old_pool": "person", "new_pool": "person",
     "en": ("{me}: My partner {old} is lovely, we've been together two years.",
            "{me}: {old} and I split up. I'm seeing {new} now.", "Who is {me} dating?"),
     "zh": ("{me}：我对象{old}人特别好，我们在一起两年了。",
            "{me}：我和{old}分手了，现在跟{new}在一起。",
            "{me}现在和谁在交往？")},
    {"old_pool": "gym", "new_pool": "gym",
     "en": ("{me}: I'm a member at {old}, it's close to home.", "{me}: I cancelled {old}, I go to {new} these days.",
            "Which gym does {me} go to?"),
     "zh": ("{me}：我办的是{old}的卡，离家近。", "{me}：{old}的卡我退了，现在去{new}练。", "{me}去哪家健身房？")},
    {"old_pool": "evening_drink", "new_pool": "soft_drink",
     "en": ("{me}: I have a glass of {old} with dinner most nights.",
            "{me}: I'm not drinking {old} anymore, it's just {new} with dinner for me.",
            "What does {me} drink with dinner?"),
     "zh": ("{me}：我晚饭的时候都要喝点{old}。", "{me}：{old}我已经戒了，晚饭只喝{new}。", "{me}晚饭喝什么？")},
    {"old_pool": "language", "new_pool": "language",
     "en": ("{me}: I'm learning {old} on an app, ten minutes every day.",
            "{me}: I'm not learning {old} anymore, {new} is what I practise now.", "Which language is {me} learning?"),
     "zh": ("{me}：我在用手机软件学{old}，每天十分钟。",
            "{me}：{old}我不学了，现在练的是{new}。",
            "{me}在学哪门语言？")},
]

DAY = datetime.timedelta(days=1)


def plant_paraphrase(u: Any, kind: Dict[str, Any]) -> None:
    me, _ = u.speakers()
    v = u.values(me, kind["slots"])
    say, question = kind[u.lang]
    evidence = u.line(me, say, v)
    u.place(u.session(), [evidence])
    u.ask("paraphrase", question.format(**v), [evidence], str(v[kind["answer"]]),
          labels={"relation": kind["relation"]})


def plant_typo(u: Any, kind: Dict[str, Any]) -> None:
    me, _ = u.speakers()
    v = u.values(me, kind["slots"])
    say, question, near = kind[u.lang]
    s = u.session()
    evidence = u.line(me, say, v)
    u.place(s, [evidence])
    u.place(u.session(avoid=[s]), [u.line(me, near, v)])
    u.ask("typo", question.format(**v), [evidence], str(v[kind["answer"]]))


def month_end(day: datetime.date) -> datetime.date:
    following = day.replace(day=28) + 4 * DAY
    return following - following.day * DAY


def period_of(form: str, day: datetime.date) -> Tuple[datetime.date, datetime.date, datetime.date, datetime.date]:
    """(start, end) that the form names for `day`, then (start, end) that no distractor may fall in.

    The exclusion is wider than the label where the words are fuzzy ("late March" may
    reach back to the 20th), so a distractor is outside the period on any reading.
    """
    first, last = day.replace(day=1), month_end(day)
    if form == "first-week":
        return first, first + 6 * DAY, first, first + 13 * DAY
    if form == "end-of-month":
        return last - 6 * DAY, last, first + 14 * DAY, last
    if form == "season":
        start, end = season_span(day)
        return start, end, start, end
    return first, last, first, last


def season_span(day: datetime.date) -> Tuple[datetime.date, datetime.date]:
    """The meteorological season of `day` (northern hemisphere): winter is December to February."""
    if SEASONS[day.month] == "winter":
        year = day.year + 1 if day.month == 12 else day.year
        return datetime.date(year - 1, 12, 1), month_end(datetime.date(year, 2, 1))
    months = [m for m in range(1, 13) if SEASONS[m] == SEASONS[day.month]]
    return datetime.date(day.year, months[0], 1), month_end(datetime.date(day.year, months[-1], 1))


def fits(form: str, day: datetime.date) -> bool:
    """Whether an event on `day` is plainly inside the period `form` names."""
    if form == "first-week":
        return day.day <= 7
    if form == "end-of-month":
        return day >= month_end(day) - 6 * DAY
    return True


def when_words(u: Any, form: str, day: datetime.date) -> str:
    forms: Any = WHEN[u.lang][form]  # a list of phrasings, or for seasons a dict of lists by season
    if form == "season":
        forms = forms[SEASONS[day.month]]
    return u.rng.choice(forms).format(month=EN_MONTHS[day.month - 1], m=day.month, cm=ZH_MONTHS[day.month - 1])


def plant_period(u: Any, kind: Dict[str, Any], form: str) -> None:
    """Evidence dated inside the period, two distractors with the same words dated outside it."""
    fitting = [s for s in range(len(u.days)) if fits(form, u.days[s])]
    s = u.session(avoid=[i for i in range(len(u.days)) if i not in fitting]) if fitting else u.session()
    if not fits(form, u.days[s]):
        form = "month"
    start, end, lo, hi = period_of(form, u.days[s])
    outside = [i for i in range(len(u.days)) if not lo <= u.days[i] <= hi]
    if not outside:
        form = "month"
        start, end, lo, hi = period_of(form, u.days[s])
        outside = [i for i in range(len(u.days)) if not lo <= u.days[i] <= hi]
    me, _ = u.speakers()
    v = u.values(me, {})
    say, question = kind[u.lang]
    answer = u.draw(kind["pool"])
    evidence = u.line(me, say, dict(v, x=answer))
    u.place(s, [evidence])
    inside = [i for i in range(len(u.days)) if i not in outside]
    for _ in range(2):
        u.place(u.session(avoid=inside), [u.line(me, say, dict(v, x=u.draw(kind["pool"])))])
    v["when"] = when_words(u, form, u.days[s])
    u.ask("period", question.format(**v), [evidence], answer,
          labels={"period": [start.isoformat(), end.isoformat()], "form": form})


def plant_update(u: Any, kind: Dict[str, Any]) -> None:
    me, _ = u.speakers()
    v = u.values(me, {})
    old_say, new_say, question = kind[u.lang]
    half = len(u.days) // 2
    old_s = u.session(0, half - 1)
    new_s = u.session(old_s + 2)
    v["old"], v["new"] = u.draw(kind["old_pool"]), u.draw(kind["new_pool"])
    old, new = u.line(me, old_say, v), u.line(me, new_say, v)
    u.place(old_s, [old])
    u.place(new_s, [new])
    u.ask("update-cue", question.format(**v), [new, old], v["new"], labels={"new": [new], "old": [old]})


def plant_all(u: Any, plan: Dict[str, int] = PLAN) -> None:
    """Every group of this module, in a fixed order, drawing only from the user's generator."""
    for kind in u.rng.sample(PARAPHRASES, plan["paraphrase"]):
        plant_paraphrase(u, kind)
    for kind in u.rng.sample(TYPOS, plan["typo"]):
        plant_typo(u, kind)
    forms: Sequence[str] = [PERIOD_FORMS[i % len(PERIOD_FORMS)] for i in range(plan["period"])]
    for kind, form in zip(u.rng.sample(PERIOD_KINDS, plan["period"]), forms):
        plant_period(u, kind, form)
    for kind in u.rng.sample(UPDATES, plan["update-cue"]):
        plant_update(u, kind)
