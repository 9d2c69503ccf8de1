#!/usr/bin/env python3
"""Builds conversations.json, Kernel's bilingual conversational recall set (issue 48).

Each conversation is one owner's history: several sessions of owner/Kernel turns in Chinese or
English (a few mixed), in which specific facts are said once among small talk and other facts.
Each question names the one turn (owner message) that answers it, and is one of three kinds:
`lexical` (same language, shares the key words), `paraphrase` (same language, other words for
them) and `cross` (the other language). Deterministic: the same seed gives the same file.

    python3 bench/recall/make_set.py > bench/recall/conversations.json
"""

import json
import random

# (id, zh statement, en statement, questions{kind: (zh, en)}); slots in braces.
FACTS = [
    ("dentist",
     "帮我记一下，{day}下午{hour}点要去看牙医，诊所在{street}",
     "Note that I have a dentist appointment on {day_en} at {hour}pm, the clinic is on {street_en}",
     {"lexical": ("我的牙医预约是哪天？", "When is my dentist appointment?"),
      "paraphrase": ("我什么时候去看牙？", "When do I see the tooth doctor?")}),
    ("hotel",
     "杭州的酒店订好了，住{hotel}，{day}入住",
     "The Hangzhou hotel is booked: {hotel_en}, check-in on {day_en}",
     {"lexical": ("杭州住哪家酒店？", "Which hotel in Hangzhou did I book?"),
      "paraphrase": ("去杭州那次订的住处叫什么？", "Where am I staying on the Hangzhou trip?")}),
    ("wifi",
     "家里新的无线网络名字是{ssid}",
     "The new home wifi network is called {ssid}",
     {"lexical": ("家里无线网络叫什么名字？", "What is the home wifi network called?"),
      "paraphrase": ("家里的网叫啥？", "What's the name of our internet at home?")}),
    ("server",
     "服务器磁盘满了，最后是用 {command} 解决的",
     "The server disk was full; in the end {command} fixed it",
     {"lexical": ("服务器磁盘满了是怎么解决的？", "How did we fix the full server disk?"),
      "paraphrase": ("上次机器存储空间不够用了哪条命令？", "Which command freed space on the machine last time?")}),
    ("birthday",
     "我妈妈的生日是{month}月{date}号，她喜欢{flower}",
     "My mother's birthday is on {month_en} {date}, she loves {flower_en}",
     {"lexical": ("妈妈生日是几号？", "When is my mother's birthday?"),
      "paraphrase": ("我母亲哪天过生？", "What day was mum born?")}),
    ("car",
     "车子保养约在{day}，{garage}修车厂",
     "The car service is booked for {day_en} at {garage_en}",
     {"lexical": ("车子保养约在哪天？", "When is the car service booked?"),
      "paraphrase": ("汽车什么时候去维护？", "When does the vehicle go in for maintenance?")}),
    ("flight",
     "航班是{flight}，{day}早上{hour}点起飞",
     "My flight is {flight}, leaving {day_en} at {hour}am",
     {"lexical": ("我的航班号是多少？", "What is my flight number?"),
      "paraphrase": ("我坐哪趟飞机？", "Which plane am I taking?")}),
    ("recipe",
     "红烧肉要先焯水，再加{spice}小火炖{minutes}分钟",
     "For braised pork, blanch it first, then add {spice_en} and simmer for {minutes} minutes",
     {"lexical": ("红烧肉要炖多少分钟？", "How long do I simmer the braised pork?"),
      "paraphrase": ("那道炖猪肉的菜要煮多久？", "How many minutes does the stewed pork dish cook?")}),
    ("doctor",
     "医生说我每天吃{pill}，饭后一片，连吃{weeks}周",
     "The doctor said to take {pill} once a day after meals for {weeks} weeks",
     {"lexical": ("医生让我吃什么药？", "Which medicine did the doctor prescribe?"),
      "paraphrase": ("大夫开的是哪种药片？", "What pills am I supposed to take?")}),
    ("gift",
     "给{friend}的生日礼物决定买{gift}",
     "For {friend_en}'s birthday present we decided on {gift_en}",
     {"lexical": ("给朋友的生日礼物买什么？", "What birthday present did we pick for my friend?"),
      "paraphrase": ("送人的那份礼最后选了啥？", "What did we settle on to give as a gift?")}),
    ("rent",
     "房租每月{rent}元，{date}号前交给房东",
     "The rent is {rent} a month, paid to the landlord before the {date}th",
     {"lexical": ("房租每月多少钱？", "How much is the rent each month?"),
      "paraphrase": ("租房子一个月要付多少？", "What do I pay for the flat monthly?")}),
    ("meeting",
     "和{client}的会议改到{day}上午{hour}点，在{room}会议室",
     "The meeting with {client_en} moved to {day_en} at {hour}am in the {room_en} room",
     {"lexical": ("和客户的会议改到什么时候？", "When is the meeting with the client now?"),
      "paraphrase": ("那个碰头改期到哪天？", "When was the catch-up rescheduled to?")}),
    ("password_hint",
     "路由器管理页面的地址是 {ip}",
     "The router admin page is at {ip}",
     {"lexical": ("路由器管理页面地址是什么？", "What is the router admin page address?"),
      "paraphrase": ("家里网关后台怎么进？", "How do I reach the gateway settings?")}),
    ("book",
     "最近在读{book}，读到第{chapter}章了",
     "I'm reading {book_en} and I'm at chapter {chapter}",
     {"lexical": ("我最近在读什么书？", "Which book am I reading?"),
      "paraphrase": ("我手上那本小说叫什么？", "What novel have I got going at the moment?")}),
    ("gym",
     "健身房办了年卡，每周{weekday_list}去练{sport}",
     "I got a yearly gym pass and go for {sport_en} every {weekday_list_en}",
     {"lexical": ("我每周哪几天去健身房？", "Which days do I go to the gym?"),
      "paraphrase": ("我一般什么时候去锻炼？", "When do I usually work out?")}),
    ("plant",
     "阳台上的{plant}每{n}天浇一次水",
     "The {plant_en} on the balcony needs water every {n} days",
     {"lexical": ("阳台上的植物多久浇一次水？", "How often do I water the balcony plant?"),
      "paraphrase": ("那盆花要隔几天浇？", "How many days between waterings for the pot outside?")}),
    ("school",
     "孩子的家长会在{day}晚上{hour}点，{teacher}老师主持",
     "The kid's parent-teacher meeting is on {day_en} at {hour}pm, run by {teacher_en}",
     {"lexical": ("家长会是什么时候？", "When is the parent-teacher meeting?"),
      "paraphrase": ("学校叫家长去开会是哪天？", "When does the school want us to come in?")}),
    ("insurance",
     "车险在{company}续保了，保单号 {policy}",
     "The car insurance was renewed with {company_en}, policy number {policy}",
     {"lexical": ("车险保单号是多少？", "What is the car insurance policy number?"),
      "paraphrase": ("汽车那份保障的编号是？", "What's the number on the vehicle cover?")}),
    ("deploy",
     "上线前记得先跑 {check}，不然会漏掉迁移",
     "Before deploying remember to run {check} first or the migrations get skipped",
     {"lexical": ("上线前要先跑什么？", "What do I run before deploying?"),
      "paraphrase": ("发布之前那个检查命令是哪个？", "Which check goes first before a release?")}),
    ("restaurant",
     "周年纪念晚餐订在{restaurant}，{hour}点，靠窗的位子",
     "The anniversary dinner is booked at {restaurant_en} at {hour}pm, a window table",
     {"lexical": ("纪念日晚餐订在哪家餐厅？", "Which restaurant is the anniversary dinner at?"),
      "paraphrase": ("我们庆祝那天去哪吃饭？", "Where are we eating to celebrate?")}),
]

SMALL_TALK = [
    ("今天天气不错", "是啊，适合出去走走。"), ("早上好", "早上好！今天有什么安排？"),
    ("有点累", "休息一下吧，喝点水。"), ("谢谢你", "不客气！"), ("周末干嘛好呢", "可以去公园或者看场电影。"),
    ("Good morning", "Good morning! What's on today?"), ("Thanks a lot", "You're welcome!"),
    ("I'm a bit tired", "Take a break and have some water."), ("Nice weather today", "Yes, a good day for a walk."),
    ("What should I do this weekend?", "Maybe a park or a film."),
]

SLOTS = {
    "day": ["下周五", "周三", "下周一", "本周六", "下个月三号"],
    "day_en": ["next Friday", "Wednesday", "next Monday", "this Saturday", "the 3rd of next month"],
    "hour": ["2", "3", "4", "9", "10"],
    "street": ["文三路", "中山北路", "南京西路", "学院路"],
    "street_en": ["Maple Street", "King Road", "Station Avenue", "Park Lane"],
    "hotel": ["西湖国宾馆", "湖滨晶华酒店", "西溪悦榕庄"],
    "hotel_en": ["the West Lake State Guest House", "the Lakeside Regent", "the Xixi Banyan Tree"],
    "ssid": ["Orange-5G", "home-net-42", "PandaNet", "Lychee_2.4G"],
    "command": ["journalctl --vacuum-size=200M", "docker system prune -a", "apt-get clean", "find /var/log -name '*.gz' -delete"],
    "month": ["3", "5", "8", "11"], "month_en": ["March", "May", "August", "November"],
    "date": ["12", "18", "21", "27"],
    "flower": ["百合", "郁金香", "兰花"], "flower_en": ["lilies", "tulips", "orchids"],
    "garage": ["安达", "顺通", "华星"], "garage_en": ["Anda Motors", "Shuntong Garage", "Star Auto"],
    "flight": ["MU5137", "CA1832", "CZ3539", "HU7605"],
    "spice": ["八角和冰糖", "桂皮和老抽"], "spice_en": ["star anise and rock sugar", "cinnamon and dark soy sauce"],
    "minutes": ["40", "60", "90"],
    "pill": ["阿莫西林", "布洛芬", "维生素D"], "pill_en": ["amoxicillin", "ibuprofen", "vitamin D"],
    "weeks": ["2", "3", "4"],
    "friend": ["小王", "阿杰", "莉莉"], "friend_en": ["Wang", "Jay", "Lily"],
    "gift": ["一副降噪耳机", "一台拍立得", "一套茶具"], "gift_en": ["noise-cancelling headphones", "an instant camera", "a tea set"],
    "rent": ["4500", "6200", "3800"],
    "client": ["星辰科技", "蓝海公司", "远航集团"], "client_en": ["Stellar Tech", "Blue Ocean Ltd", "Voyager Group"],
    "room": ["三楼大", "A203", "小"], "room_en": ["third-floor", "A203", "small"],
    "ip": ["192.168.1.1", "192.168.31.1", "10.0.0.1"],
    "book": ["《三体》", "《活着》", "《百年孤独》"], "book_en": ["The Three-Body Problem", "To Live", "One Hundred Years of Solitude"],
    "chapter": ["7", "12", "20"],
    "weekday_list": ["一三五", "二四六"], "weekday_list_en": ["Monday, Wednesday and Friday", "Tuesday, Thursday and Saturday"],
    "sport": ["力量训练", "游泳", "瑜伽"], "sport_en": ["strength training", "swimming", "yoga"],
    "plant": ["绿萝", "茉莉", "多肉"], "plant_en": ["pothos", "jasmine", "succulent"],
    "n": ["3", "5", "7"],
    "teacher": ["李", "张", "陈"], "teacher_en": ["Ms Li", "Mr Zhang", "Ms Chen"],
    "company": ["平安", "人保", "太平洋"], "company_en": ["Ping An", "PICC", "CPIC"],
    "policy": ["PA-2026-88311", "RB-77120-3", "TP-400912"],
    "check": ["make check-migrations", "cargo sqlx prepare --check", "./scripts/preflight"],
    "restaurant": ["新荣记", "外婆家", "甬府"], "restaurant_en": ["Xin Rong Ji", "Grandma's Kitchen", "Yong Fu"],
}


def fill(text, values):
    return text.format(**values)


def main():
    rng = random.Random(48)
    conversations = []
    questions = 0
    for c in range(44):
        lang = ["zh", "en", "zh", "en", "mixed"][c % 5]
        values = {k: rng.choice(v) for k, v in SLOTS.items()}
        # Keep the paired zh/en slots consistent (same index).
        for k, v in SLOTS.items():
            if k.endswith("_en") and k[:-3] in SLOTS:
                i = SLOTS[k[:-3]].index(values[k[:-3]])
                values[k] = v[i % len(v)]
        facts = rng.sample(FACTS, 8)
        sessions = []
        turn_id = 0
        qs = []
        for s in range(rng.randint(3, 5)):
            turns = []
            for _ in range(rng.randint(2, 4)):
                said, answer = rng.choice(SMALL_TALK)
                turns.append({"id": f"c{c}t{turn_id}", "owner": said, "kernel": answer})
                turn_id += 1
            sessions.append(turns)
        for fact in facts:
            fid, zh, en, qmap = fact
            fact_lang = lang if lang != "mixed" else rng.choice(["zh", "en"])
            said = fill(zh if fact_lang == "zh" else en, values)
            answer = "好的，记下了。" if fact_lang == "zh" else "Got it, noted."
            tid = f"c{c}t{turn_id}"
            turn_id += 1
            session = rng.randrange(len(sessions))
            sessions[session].insert(rng.randrange(len(sessions[session]) + 1),
                                     {"id": tid, "owner": said, "kernel": answer})
            own = 0 if fact_lang == "zh" else 1
            other = 1 - own
            for kind, pair in qmap.items():
                qs.append({"question": pair[own], "kind": kind, "answer": tid, "lang": fact_lang})
            # A cross-language question (the lexical wording in the other language).
            qs.append({"question": qmap["lexical"][other], "kind": "cross", "answer": tid,
                       "lang": "en" if fact_lang == "zh" else "zh"})
        # Keep 7-8 questions per conversation, every kind represented.
        rng.shuffle(qs)
        kept = qs[:8]
        questions += len(kept)
        conversations.append({"id": f"c{c}", "language": lang, "sessions": sessions, "questions": kept})
    out = {
        "name": "kernel-recall-v1",
        "about": "Kernel's bilingual conversational recall set (issue 48), from bench/recall/make_set.py",
        "conversations": conversations,
        "questions": questions,
    }
    print(json.dumps(out, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
