"""The planted facts, one table per category: what a user says, and the question and answer it makes."""
from __future__ import annotations

from typing import Any, Dict, List

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
