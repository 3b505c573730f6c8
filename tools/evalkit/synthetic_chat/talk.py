"""The typed-chat set's small talk: greetings, reactions, openers, questions and answers, with their slots."""
from __future__ import annotations

GREETINGS = ["Hey!", "Heyyy", "Hiii", "Hello hello", "Yo", "Hey you", "Hey {you}!", "{you}!!", "Omg hi",
             "Helloooo", "Hey, you around?"]

FAREWELLS = ["Ok I'm off, talk later!", "Gotta go, speak soon", "Ttyl", "Ok I need to sleep lol", "Speak soon x",
             "Bye!!", "Ok back to work, ugh", "Laters", "Ok battery dying, bye", "Love you, bye", "Later!"]

REACTIONS = ["lol", "haha", "hahaha", "lmao", "omg", "wait what", "no way", "same", "true", "fair", "ikr", "ugh",
             "oof", "yikes", "nice", "love that", "haha yes", "right??", "😂", "😭", "ok", "yesss", "noooo", "damn",
             "aww", "wow", "mood", "hmm", "yep", "nah", "stop", "lol same", "👀", "ha"]

OPENERS = ["Hey", "Heyyy", "Quick question", "Ok random question", "Wait", "Ok so", "{you}!!", "Omg hi", "Hiii"]

FOLLOWUPS = ["No pressure lol", "I need ideas", "Asking because I'm nosy", "You never told me",
             "I keep forgetting to ask", "Also hi", "Sorry, I've been so bad at replying", "Tell me everything",
             "Ok that's all", "I'm so curious", "Wait I think you said but I forgot", "Hello??"]

PRE_REPLY = ["Haha", "Lol ok", "Omg hi", "Ok ok", "Hiii", "Sorry, was driving", "One sec", "Hahaha", "Ahh yes",
             "Hold on", "Lol"]

FACT_REACTIONS = {"good": ["Omg!!", "Wait what", "No way!!", "Congrats!!", "Love that", "Yesss", "Tell me more"],
                  "bad": ["Noooo", "Oh no", "Are you ok??", "Ugh I'm sorry", "Oof"],
                  "neutral": ["Oh nice", "Wait really", "Huh", "Ooh", "Omg"]}

SINGLE_REACTIONS = ["Oh nice", "Ha I didn't know that", "Really?", "Makes sense", "Huh", "Noted", "Ooh",
                    "That explains a lot lol", "Cute"]

OWN_OPENERS = ["Still up?", "Can't sleep", "Ugh", "Random but", "Ok so", "Are you awake", "Sorry it's late"]

OWN_CLOSERS = ["Anyway", "I should sleep lol", "Why am I still awake", "Ok bed", "Send help"]

OWN_REACTIONS = {"past": ["Noooo", "Omg", "Haha classic", "How was it?", "Lol of course", "Wait really"],
                 "future": ["Good luck!!", "Omg", "Go to sleep then!!", "You'll be fine", "Exciting!", "Ooh"]}

SMALL_QUESTIONS = ["How's your week going?", "How are you?", "What are you up to?", "How was work?",
                   "Did you sleep ok?", "How's your mum doing?", "Did you eat yet?",
                   "Are you still coming to the thing?", "What's the plan for the weekend?", "Any news?", "You alive?",
                   "Did you see my message earlier?", "Are you busy?", "How did the meeting go?",
                   "Do you want to call later?"]

SMALL_ANSWERS = ["Not bad, just tired", "Busy but fine", "Honestly pretty good!", "Meh", "Surviving", "Just got home",
                 "Lying on the sofa doing nothing", "Still at work, ugh", "About to make dinner", "Yes finally!",
                 "Not yet lol", "Can't complain", "It's been a long one", "Good! You?", "Eh, could be worse",
                 "Definitely, I'll text you", "Probably, depends on work", "No idea honestly"]

SMALL_TALK = [
    "Work is so busy right now", "Meetings all day, send help", "My laptop died in the middle of a call",
    "The printer at work is possessed", "Finally finished that report", "Someone microwaved fish in the office again",
    "I have so many emails it's not even funny", "My team lunch got cancelled", "It's pouring here",
    "It's so cold I can't feel my hands", "The sun is finally out!", "It's so windy, my umbrella gave up",
    "Snow!! Actual snow", "It's weirdly warm for this time of year", "I just ate an entire bag of crisps",
    "Pizza for dinner again, no regrets", "I made soup and it's actually good", "I'm starving",
    "Why is coffee so expensive now", "I burned the toast. Again", "Ordered takeaway, couldn't be bothered to cook",
    "I need to go grocery shopping so bad", "My neighbours are drilling again",
    "The washing machine is making a weird noise", "I finally cleaned my room",
    "There's a spider in the bathroom and it lives here now", "I've got so much laundry", "The wifi keeps dropping",
    "I'm rewatching the same show for the fifth time", "That new baking show is so good",
    "I fell asleep during the film lol", "This song has been stuck in my head all day", "We should hang out soon",
    "I need a holiday", "Let's do drinks soon", "I might go for a run later", "I'm gonna have a quiet one tonight",
    "I slept like 4 hours", "My back hurts from the new chair", "I think I'm getting a cold",
    "I've had three coffees and it's not working", "My mum keeps sending me recipes",
    "The family group chat is chaos", "My cousin just had a baby!", "Everyone's getting engaged, what is happening",
    "I got lost on the way to the shops lol", "The bus was 20 minutes late", "Traffic was awful",
    "I bought a plant. It's already dying", "I'm trying to read more but my phone wins every time",
    "Someone left a note on my car, turned out to be a flyer", "We should plan a trip somewhere",
    "My cousin ran a marathon and won't stop talking about it", "I need a new job honestly",
    "The vet bills for my parents' dog are insane", "I want to dye my hair but I'm scared",
    "I keep saying I'll learn a language", "Half my office is on some diet", "The gym was packed so I left",
    "My phone battery is a joke", "Are you free this weekend?", "I'm so tired today", "I can't be bothered to cook",
    "There's a new cafe on my street, the cakes are huge", "My landlord still hasn't fixed the heating",
    "I definitely need an early night", "I'm trying to drink more water", "Honestly I need a nap",
    "I'm going to be late as usual", "Because of course the train is cancelled", "It's raining though, so no",
    "Thanks for sending that", "I don't know what to have for dinner", "I really need to call my grandma",
    "Something smells amazing in my building", "Everyone at work is off sick", "My plants are thriving though",
    "I just walked 15k steps, I'm dead", "Your voice notes are the best", "I want to get a dog so bad",
    "I got a parking ticket, great", "I'm watching the match, it's tense", "Payday can't come soon enough",
]

# Small talk with slots, for variety: filled from SLOT_WORDS at each use.
SMALL_TALK_SLOTS = [
    "{food} for dinner again", "I'm craving {food} so bad", "Made {food}, it came out {result}",
    "It's so {weather} here", "Ugh it's {weather} again", "My {object} broke, of course",
    "Can I borrow your {object} at some point?", "Watching a {genre} thing, it's {result}",
    "Just got back from {errand}", "I have to go to {errand}, send help", "Did {activity} for like 20 minutes lol",
    "Trying to get back into {activity}", "Listening to a podcast about {topic}",
    "Fell down a rabbit hole about {topic}",
    "My {relative} called for an hour", "My {relative} says hi",
]

SLOT_WORDS = {
    "food": ["pasta", "toast", "noodles", "soup", "tacos", "leftovers", "cereal", "curry", "pancakes", "a salad"],
    "result": ["great", "a bit dry", "surprisingly good", "too salty", "perfect", "edible at best", "weird"],
    "weather": ["grey", "rainy", "windy", "humid", "cold", "gloomy", "foggy", "sunny"],
    "object": ["umbrella", "hoover", "bike pump", "drill", "hair dryer", "kettle", "ladder", "suitcase"],
    "genre": ["crime", "cooking", "sci-fi", "true crime", "comedy", "nature"],
    "errand": ["the post office", "the supermarket", "the pharmacy", "the bank", "ikea", "the tip"],
    "activity": ["running", "drawing", "yoga", "journaling", "swimming", "stretching"],
    "topic": ["octopuses", "old shipwrecks", "sleep", "bees", "volcanoes", "medieval food"],
    "relative": ["mum", "dad", "aunt", "grandad", "cousin", "brother"],
}
