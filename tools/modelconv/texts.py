"""The reference texts: written for this project (none copied from a data set).

They cover what an agent's memory store holds and what breaks tokenizers:
short facts, conversation turns, scientific claims and abstracts,
identifiers, error strings, accented, CJK and other scripts, emoji, control
characters, empty and empty-after-tokenisation text, special-token literals,
and texts longer than the models' maximum lengths.
"""

FACTS = [
    "The user prefers dark mode in every editor.",
    "Alice's birthday is on the 14th of March.",
    "The staging database runs PostgreSQL 16 on port 5433.",
    "Bob is allergic to peanuts and shellfish.",
    "Our team standup happens at 9:30 every weekday.",
    "The project uses Go 1.26 and builds without cgo.",
    "Paris is the capital of France.",
    "Water boils at 100 degrees Celsius at sea level.",
    "The deploy key rotates every ninety days.",
    "Maria moved from Lisbon to Berlin in 2021.",
    "The cat's name is Pixel and she is seven years old.",
    "Invoices are due thirty days after the end of the month.",
    "The API rate limit is 600 requests per minute per key.",
    "Tom likes hiking, board games and Ethiopian food.",
    "The office Wi-Fi password changes on the first Monday of each month.",
    "Backups are written nightly to an encrypted bucket in eu-west-1.",
    "The customer asked for the report in PDF, not in Excel.",
    "Python 3.11 is the minimum supported version for the tooling.",
    "The meeting room on the fourth floor has a broken projector.",
    "She takes her coffee black, no sugar.",
    "The release train leaves every second Thursday.",
    "Jupiter is the largest planet in the solar system.",
    "The user's time zone is America/Los_Angeles.",
    "Kubernetes pods in the batch namespace may be preempted.",
    "He has two daughters, Emma and Lily.",
    "The recipe needs 200 g of flour and three eggs.",
    "Support tickets older than a week are escalated automatically.",
    "The marathon is on Sunday, 21 September.",
    "The laptop is a 14-inch model with 32 GB of memory.",
    "Do not schedule meetings on Friday afternoons.",
]

TURNS = [
    "Hey, how was your weekend?",
    "Pretty good! We went camping near the lake and it rained the whole time, haha.",
    "Oh no. Did the tent hold up at least?",
    "Barely. I think we need a new one before the summer trip.",
    "I just started a pottery class on Tuesdays. It's harder than it looks.",
    "That sounds fun! What did you make first?",
    "A bowl. Well, it was supposed to be a bowl. It's more of a plate now.",
    "Can you remind me what we decided about the database migration?",
    "We agreed to run it on Saturday night and keep the old cluster for a week.",
    "Thanks. And who is on call during the migration?",
    "I'm thinking about adopting a dog from the shelter next month.",
    "You should! Which breed are you looking at?",
    "Probably a mixed breed, something calm that is good with kids.",
    "My sister got engaged last night, I'm so happy for her!",
    "Congratulations to her! When is the wedding?",
    "Next June, in Porto. You're invited, of course.",
    "ok",
    "lol",
    "yes please",
    "no, the other one",
    "Sorry, I can't make it tomorrow - something came up at work.",
    "No worries, let's move it to Thursday.",
    "Did you finish reading the book I lent you?",
    "Almost! Two chapters left. The ending better be worth it...",
    "I've been feeling stressed lately, work has been a lot.",
    "That's rough. Have you thought about taking a few days off?",
    "Remember to water the plants while I'm away, especially the basil.",
    "Will do. How often, every two days?",
    "What's the name of that Thai place we liked?",
    "I think it was called Baan Suan, on Elm Street.",
]

CLAIMS = [
    "Vitamin D supplementation reduces the risk of respiratory infections in children.",
    "Regular aerobic exercise improves memory performance in older adults.",
    "Mutations in the BRCA1 gene increase the lifetime risk of breast cancer.",
    "Statins lower LDL cholesterol by inhibiting HMG-CoA reductase.",
    "Sleep deprivation impairs glucose tolerance in healthy young men.",
    "Gut microbiota composition differs between lean and obese individuals.",
    "Antibiotic use in infancy is associated with later childhood asthma.",
    "CRISPR-Cas9 editing can correct the sickle cell mutation in hematopoietic stem cells.",
    "High salt intake raises blood pressure in salt-sensitive people.",
    "Telomere length shortens with each cell division in somatic cells.",
    "Metformin activates AMPK in hepatocytes.",
    "Microglia prune synapses during postnatal brain development.",
    "Smoking cessation reduces the risk of coronary heart disease within five years.",
    "The p53 protein induces apoptosis after DNA damage.",
    "Influenza vaccination lowers hospital admissions among the elderly.",
    "0-dimensional nanoparticles show catalytic activity at room temperature.",
    "1 in 500 adults carries a pathogenic variant for familial hypercholesterolemia.",
    "IL-6 levels predict mortality in patients with sepsis.",
    "Exposure to air pollution (PM2.5) is linked to cognitive decline.",
    "Caloric restriction extends lifespan in mice but not necessarily in primates.",
    "Beta-blockers reduce mortality after myocardial infarction.",
    "Placebo effects can be observed even when patients know they receive a placebo.",
    "T cells recognise antigens presented on MHC class I molecules.",
    "Long non-coding RNAs regulate chromatin state in embryonic stem cells.",
    "Aspirin reduces the incidence of colorectal adenomas.",
]

ABSTRACTS = [
    "Background: Chronic inflammation contributes to the progression of atherosclerosis. "
    "We investigated whether circulating interleukin-1 beta predicts cardiovascular events. "
    "Methods: In a prospective cohort of 4,212 adults followed for a median of 8.3 years, "
    "plasma cytokines were measured at baseline. Results: Higher IL-1β concentrations were "
    "associated with a 1.4-fold increase in major adverse cardiovascular events (95% CI 1.1-1.8), "
    "independent of LDL cholesterol. Conclusions: IL-1β may be a useful marker of residual risk.",
    "The mechanisms that couple neuronal activity to local blood flow remain debated. "
    "Using two-photon imaging in awake mice, we show that pericytes on capillaries dilate "
    "before arterioles during sensory stimulation, and that this response depends on "
    "nitric oxide and prostaglandin E2 signalling. Blocking pericyte relaxation reduced the "
    "hemodynamic response by about 40%, suggesting capillaries are an active site of control.",
    "Antimicrobial resistance is an increasing threat to global health. We sequenced 1,097 "
    "Escherichia coli isolates collected from hospitals in twelve countries between 2010 and 2019 "
    "and identified plasmid-borne carbapenemase genes in 6.2% of them. Phylogenetic analysis "
    "indicated repeated introductions rather than clonal spread of a single lineage.",
    "Deep learning models have achieved high accuracy in classifying skin lesions from dermoscopic "
    "images. However, their performance on darker skin tones is rarely reported. We evaluated three "
    "published classifiers on a new data set of 2,400 images and found sensitivity for melanoma "
    "dropped from 0.91 to 0.67 on Fitzpatrick types V and VI.",
    "Circadian clocks regulate metabolism in peripheral tissues. Mice lacking the clock gene Bmal1 "
    "in adipocytes gained more weight on a high-fat diet, ate more during the light phase, and showed "
    "altered expression of genes involved in lipid storage. Restricting feeding to the dark phase "
    "normalised body weight.",
    "Objective: To compare the effectiveness of cognitive behavioural therapy delivered online with "
    "face-to-face therapy for insomnia. Design: Randomised non-inferiority trial. Participants: 312 "
    "adults with chronic insomnia. Main outcome: Insomnia Severity Index at 6 months. Results: The "
    "online programme was non-inferior (mean difference 0.6 points, 95% CI -0.4 to 1.6).",
    "Autophagy maintains cellular homeostasis by degrading damaged organelles. Here we report that "
    "the kinase ULK1 phosphorylates a previously uncharacterised site on ATG13, and that cells "
    "expressing a phospho-dead mutant accumulate depolarised mitochondria under nutrient stress.",
    "We present a genome-wide association study of 48,000 individuals for age at onset of "
    "myopia and identify 17 loci, nine of them new. Several implicated genes are expressed in the "
    "retinal pigment epithelium and participate in light-dependent signalling.",
]

IDENTIFIERS = [
    "tasks_claim",
    "SEAMLESS_DATA_DIR",
    "ENGRAM_EMBEDDER=builtin",
    "getUserByIdAsync",
    "HTTPServerErrorHandler",
    "snake_case_identifier_with_many_parts",
    "/var/lib/engram/memories.db",
    "C:\\Users\\alice\\AppData\\Local\\Temp",
    "github.com/engram-memory/engram/embed",
    "user@example.com",
    "https://example.org/docs/v2/search?q=hybrid+recall&k=60#results",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "v1.4.0-rc.2+build.517",
    "0xDEADBEEF",
    "192.168.1.254:8080",
    "2024-03-14T09:26:53.589Z",
    "CVE-2021-44228",
    "func (s *Store) Put(ctx context.Context, m Memory) error {",
    "SELECT id, text FROM memories WHERE scope = ? ORDER BY created_at DESC LIMIT 10;",
    '{"type": "fact", "tags": ["work", "db"], "favorite": true}',
    "error: open /etc/engram/config.toml: permission denied",
    "panic: runtime error: index out of range [3] with length 3",
    "FATAL:  password authentication failed for user \"postgres\"",
    "TypeError: Cannot read properties of undefined (reading 'map')",
    "sqlite3.OperationalError: database is locked",
    "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
    "E0308: mismatched types, expected `u32`, found `usize`",
    "npm ERR! code ERESOLVE",
    "$ go test -race -count=1 ./...",
    "x := a[i:j:k] // three-index slice",
]

SCRIPTS = [
    "Café au lait, crème brûlée et piña colada.",
    "Ångström, Øresund, Æbleskiver, Straße, Œuvre.",
    "naïve façade résumé coöperate",
    "Ελληνικά: Η γρήγορη καφέ αλεπού πηδάει.",
    "ΣΊΣΥΦΟΣ ΟΔΥΣΣΕΥΣ",
    "Русский текст: съешь же ещё этих мягких французских булок.",
    "İstanbul'da ılık bir akşam, ŞİŞLİ ve Çankaya.",
    "Việt Nam có nhiều món ăn ngon như phở và bánh mì.",
    "日本語のテキストを正しく分割できますか。",
    "我今天去超市买了苹果和牛奶。",
    "繁體中文的句子，包含標點符號！",
    "한국어 문장도 토큰화해야 합니다.",
    "ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ",
    "العربية تكتب من اليمين إلى اليسار",
    "עברית היא שפה שמית",
    "हिन्दी में लिखा गया वाक्य।",
    "Mixed: the 東京 office and the München office share a calendar.",
    "Full-width: ＡＢＣ　１２３　！？",
    "Ligatures: ﬁnance ﬂow ﬀ, and roman numeral Ⅻ, and ① ② ③.",
    "Decomposed accents: cafe\u0301 and nai\u0308ve.",
    "Compatibility ideographs: \uf900\uf901 and 丽.",
    "Math: ∑ x² ≤ ∞, α + β = γ, 5 × 3 ÷ 2 ≈ 7.5",
    "Currency: €100, £75, ¥3000, ₹500, $19.99",
    "Typographic “quotes”, ‘single’, «guillemets», and — dashes – here…",
]

EMOJI = [
    "😀",
    "I love this 😍😍😍",
    "Great job 👍🏽 team 🎉",
    "Family: 👨\u200d👩\u200d👧\u200d👦",
    "Flags: 🇩🇪 🇯🇵 🇧🇷",
    "New emoji 🥲 🫠 🫡 🪿",
    "❤️ vs ❤ vs ♥",
    "Keycap: 1️⃣ #️⃣",
    "emoji-only after tokenisation: 🤖",
    "🙂 thanks!",
]

CONTROL = [
    "tab\tseparated\tvalues",
    "line one\nline two\r\nline three",
    "null\x00byte in the middle",
    "bell\x07 and escape\x1b[31mred\x1b[0m",
    "zero\u200bwidth\u200cjoiner\u200dtest",
    "non\u00a0breaking\u2009thin\u3000ideographic spaces",
    "soft\u00adhyphen and BOM\ufeffinside",
    "right-to-left \u202eoverride\u202c mark",
    "private use \ue000\uf8ff area",
    "replacement \ufffd char",
    "unassigned \U000e0001 tag and \U0010ffff",
    "   leading and trailing spaces   ",
]

EMPTY = [
    "",
    " ",
    "\t\n\r",
    "\x00\x01\x02\x7f",
    "\u200b\u200d\ufeff",
    "\U000f0000",
    "🤖",
    "🥲🫠",
]

SPECIAL = [
    "[CLS]",
    "hello [SEP] world",
    "foo[CLS]bar [cls] [Cls]",
    "[PAD] padding [PAD]",
    "[UNK] unknown [UNK]",
    "[MASK] is masked",
    "[unused0] [unused993]",
    "##ing ##s",
]


def _long_text(n_sentences, seed_words):
    """A deterministic long text built from the sentences above (no randomness)."""
    pool = FACTS + TURNS + CLAIMS
    out = []
    for i in range(n_sentences):
        out.append(pool[(i * seed_words + 7) % len(pool)])
    return " ".join(out)


LONG = [
    " ".join(ABSTRACTS[:3]),  # about 256 tokens
    _long_text(40, 3),  # past 256 tokens
    _long_text(90, 5),  # past 512 tokens (the static model's limit)
    "word " * 300,
    "a" * 150,  # one word past WordPiece's 100-character limit
    "x" * 100,  # exactly at the limit
    "supercalifragilisticexpialidocious antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "1234567890" * 30,
    ", ".join(str(i) for i in range(200)),
    "!?" * 200,
    "日本" * 200,
]

MISC = [
    "# Heading\n\n- item one\n- item **two**\n\n```go\nfmt.Println(\"hi\")\n```",
    "<div class=\"note\">HTML &amp; entities &lt;b&gt;</div>",
    "Call me at +1 (555) 010-9999 ext. 42.",
    "Meeting moved: 3pm → 4:30pm (UTC+02:00).",
    "The score was 3–2 after extra time.",
    "e.g. i.e. etc. vs. Mr. Dr. U.S.A.",
    "don't won't can't it's they're y'all",
    "ALL CAPS SENTENCE SHOUTING ABOUT THE DEADLINE",
    "MiXeD cAsE tExT",
    "price: 1,299.00 USD; discount 15 %; ratio 3:2",
]

TEXTS = FACTS + TURNS + CLAIMS + ABSTRACTS + IDENTIFIERS + SCRIPTS + EMOJI + CONTROL + EMPTY + SPECIAL + LONG + MISC
