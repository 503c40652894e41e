"""The static tables the sandbox's records are drawn from.

38 real places (:data:`TOWNS`: centre coordinates, county, local authority, outcodes with a
locality each, region, Land Registry title prefix and council tax band D charge), regional prices,
property types, street names, postcode inward-code letters, council tax bands and tags.
:mod:`propertykit.sandbox._data` turns them into records; nothing here changes between runs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Town:
    """A real town: centre coordinates, county, local authority and some of its outcodes."""

    name: str
    county: str
    local_authority: str
    lat: float
    lng: float
    outcodes: tuple[str, ...]
    localities: tuple[str, ...]
    region: str
    title_prefix: str
    band_d: int  # council tax band D charge, pounds per year


#: The places records are in, each drawn equally often (London by four of its boroughs).
TOWNS: tuple[Town, ...] = (
    Town("London", "Greater London", "Westminster", 51.4975, -0.1357,
         ("SW1A", "SW1P", "SW1V", "W1J"), ("St James's", "Westminster", "Pimlico", "Mayfair"),
         "London", "NGL", 1020),
    Town("London", "Greater London", "Camden", 51.5390, -0.1426,
         ("NW1", "NW3", "NW5", "WC1H"), ("Camden Town", "Hampstead", "Kentish Town", "Bloomsbury"),
         "London", "NGL", 2010),
    Town("London", "Greater London", "Hackney", 51.5450, -0.0553,
         ("E8", "E9", "E5", "N16"), ("Dalston", "Homerton", "Clapton", "Stoke Newington"),
         "London", "EGL", 1880),
    Town("London", "Greater London", "Lambeth", 51.4607, -0.1163,
         ("SW2", "SW4", "SW9", "SE11"), ("Brixton Hill", "Clapham", "Stockwell", "Kennington"),
         "London", "TGL", 1830),
    Town("Manchester", "Greater Manchester", "Manchester", 53.4808, -2.2426,
         ("M1", "M4", "M14", "M20"), ("City Centre", "Ancoats", "Fallowfield", "Didsbury"),
         "North West", "MAN", 2140),
    Town("Birmingham", "West Midlands", "Birmingham", 52.4862, -1.8904,
         ("B1", "B5", "B13", "B15"), ("City Centre", "Digbeth", "Moseley", "Edgbaston"),
         "West Midlands", "WM", 2110),
    Town("Leeds", "West Yorkshire", "Leeds", 53.8008, -1.5491,
         ("LS1", "LS6", "LS8", "LS17"), ("City Centre", "Headingley", "Roundhay", "Alwoodley"),
         "Yorkshire and the Humber", "WYK", 2050),
    Town("Sheffield", "South Yorkshire", "Sheffield", 53.3811, -1.4701,
         ("S1", "S7", "S10", "S11"), ("City Centre", "Nether Edge", "Crookes", "Ecclesall"),
         "Yorkshire and the Humber", "SYK", 2250),
    Town("Liverpool", "Merseyside", "Liverpool", 53.4084, -2.9916,
         ("L1", "L8", "L17", "L18"), ("City Centre", "Toxteth", "Aigburth", "Allerton"),
         "North West", "MS", 2300),
    Town("Bristol", "City of Bristol", "Bristol", 51.4545, -2.5879,
         ("BS1", "BS6", "BS7", "BS8"), ("Harbourside", "Redland", "Bishopston", "Clifton"),
         "South West", "BL", 2400),
    Town("Newcastle upon Tyne", "Tyne and Wear", "Newcastle upon Tyne", 54.9783, -1.6178,
         ("NE1", "NE2", "NE3", "NE6"), ("City Centre", "Jesmond", "Gosforth", "Heaton"),
         "North East", "TY", 2330),
    Town("Nottingham", "Nottinghamshire", "Nottingham", 52.9548, -1.1581,
         ("NG1", "NG2", "NG5", "NG7"), ("Lace Market", "West Bridgford", "Sherwood", "Lenton"),
         "East Midlands", "NT", 2450),
    Town("Leicester", "Leicestershire", "Leicester", 52.6369, -1.1398,
         ("LE1", "LE2", "LE3", "LE4"), ("City Centre", "Clarendon Park", "Westcotes", "Belgrave"),
         "East Midlands", "LT", 2200),
    Town("Oxford", "Oxfordshire", "Oxford", 51.7520, -1.2577,
         ("OX1", "OX2", "OX3", "OX4"), ("Jericho", "Summertown", "Headington", "Cowley"),
         "South East", "ON", 2390),
    Town("Cambridge", "Cambridgeshire", "Cambridge", 52.2053, 0.1218,
         ("CB1", "CB2", "CB3", "CB4"), ("Mill Road", "Newnham", "Grantchester", "Chesterton"),
         "East of England", "CB", 2220),
    Town("Norwich", "Norfolk", "Norwich", 52.6309, 1.2974,
         ("NR1", "NR2", "NR3", "NR4"), ("Thorpe Hamlet", "Golden Triangle", "Mile Cross", "Eaton"),
         "East of England", "NK", 2280),
    Town("Brighton", "East Sussex", "Brighton and Hove", 50.8225, -0.1372,
         ("BN1", "BN2", "BN3"), ("North Laine", "Kemptown", "Hove"),
         "South East", "ESX", 2290),
    Town("Southampton", "Hampshire", "Southampton", 50.9097, -1.4044,
         ("SO14", "SO15", "SO16", "SO17"), ("Ocean Village", "Shirley", "Bassett", "Portswood"),
         "South East", "HP", 2120),
    Town("Reading", "Berkshire", "Reading", 51.4543, -0.9781,
         ("RG1", "RG2", "RG4", "RG30"), ("Town Centre", "Whitley", "Caversham", "Tilehurst"),
         "South East", "BK", 2290),
    Town("Guildford", "Surrey", "Guildford", 51.2362, -0.5704,
         ("GU1", "GU2", "GU4"), ("Town Centre", "Onslow Village", "Merrow"),
         "South East", "SY", 2330),
    Town("Exeter", "Devon", "Exeter", 50.7184, -3.5339,
         ("EX1", "EX2", "EX4"), ("Heavitree", "St Thomas", "Pennsylvania"),
         "South West", "DN", 2290),
    Town("Plymouth", "Devon", "Plymouth", 50.3755, -4.1427,
         ("PL1", "PL3", "PL4"), ("Stonehouse", "Peverell", "Mutley"),
         "South West", "DN", 2320),
    Town("Bath", "Somerset", "Bath and North East Somerset", 51.3811, -2.3590,
         ("BA1", "BA2"), ("Lansdown", "Widcombe"),
         "South West", "ST", 2120),
    Town("York", "North Yorkshire", "York", 53.9600, -1.0873,
         ("YO1", "YO10", "YO24", "YO31"), ("City Centre", "Heslington", "Dringhouses", "Heworth"),
         "Yorkshire and the Humber", "NYK", 2080),
    Town("Kingston upon Hull", "East Riding of Yorkshire", "Kingston upon Hull", 53.7676, -0.3274,
         ("HU1", "HU3", "HU5"), ("Old Town", "Anlaby Road", "Newland Park"),
         "Yorkshire and the Humber", "HS", 2010),
    Town("Derby", "Derbyshire", "Derby", 52.9225, -1.4746,
         ("DE1", "DE22", "DE23"), ("City Centre", "Darley Abbey", "Littleover"),
         "East Midlands", "DY", 2150),
    Town("Coventry", "West Midlands", "Coventry", 52.4068, -1.5197,
         ("CV1", "CV2", "CV3", "CV5"), ("City Centre", "Stoke", "Earlsdon", "Allesley"),
         "West Midlands", "WK", 2260),
    Town("Stoke-on-Trent", "Staffordshire", "Stoke-on-Trent", 53.0027, -2.1794,
         ("ST1", "ST4", "ST6"), ("Hanley", "Trent Vale", "Burslem"),
         "West Midlands", "SF", 1950),
    Town("Preston", "Lancashire", "Preston", 53.7632, -2.7031,
         ("PR1", "PR2"), ("City Centre", "Fulwood"),
         "North West", "LA", 2260),
    Town("Carlisle", "Cumbria", "Cumberland", 54.8925, -2.9329,
         ("CA1", "CA2", "CA3"), ("Botcherby", "Denton Holme", "Stanwix"),
         "North West", "CU", 2300),
    Town("Durham", "County Durham", "County Durham", 54.7761, -1.5733,
         ("DH1",), ("City Centre",),
         "North East", "DU", 2370),
    Town("Ipswich", "Suffolk", "Ipswich", 52.0567, 1.1482,
         ("IP1", "IP3", "IP4"), ("Town Centre", "Rushmere", "California"),
         "East of England", "SK", 2240),
    Town("Canterbury", "Kent", "Canterbury", 51.2802, 1.0789,
         ("CT1", "CT2"), ("City Centre", "St Dunstan's"),
         "South East", "K", 2250),
    Town("Milton Keynes", "Buckinghamshire", "Milton Keynes", 52.0406, -0.7594,
         ("MK9", "MK10", "MK6"), ("Central Milton Keynes", "Broughton", "Netherfield"),
         "South East", "BM", 2020),
    Town("Cardiff", "South Glamorgan", "Cardiff", 51.4816, -3.1791,
         ("CF10", "CF11", "CF14", "CF24"), ("City Centre", "Canton", "Llandaff North", "Roath"),
         "Wales", "CYM", 1860),
    Town("Swansea", "West Glamorgan", "Swansea", 51.6214, -3.9436,
         ("SA1", "SA2"), ("City Centre", "Sketty"),
         "Wales", "CYM", 1950),
    Town("Edinburgh", "City of Edinburgh", "City of Edinburgh", 55.9533, -3.1883,
         ("EH1", "EH3", "EH6", "EH10"), ("Old Town", "New Town", "Leith", "Morningside"),
         "Scotland", "MID", 1640),
    Town("Glasgow", "Glasgow City", "Glasgow City", 55.8642, -4.2518,
         ("G1", "G3", "G11", "G12"), ("Merchant City", "Finnieston", "Partick", "Hillhead"),
         "Scotland", "GLA", 1550),
)  # fmt: skip

#: Region -> (average price at :data:`~propertykit.sandbox._data.REFERENCE_DATE` in pounds,
#: yearly growth).
REGION_PRICES: dict[str, tuple[float, float]] = {
    "London": (520_000, 0.052),
    "South East": (385_000, 0.047),
    "East of England": (340_000, 0.046),
    "South West": (310_000, 0.043),
    "West Midlands": (245_000, 0.039),
    "East Midlands": (240_000, 0.040),
    "North West": (215_000, 0.037),
    "Yorkshire and the Humber": (210_000, 0.036),
    "North East": (160_000, 0.029),
    "Wales": (215_000, 0.036),
    "Scotland": (190_000, 0.033),
}

#: propertyType, weight, classificationCode, subtypes, price factor, (fewest, most) beds.
PROPERTY_TYPES: tuple[tuple[str, float, str, tuple[str, ...], float, tuple[int, int]], ...] = (
    ("terraced", 0.28, "RD04", ("mid-terrace", "end-terrace"), 0.85, (2, 4)),
    ("semi-detached", 0.24, "RD03", ("semi-detached house",), 1.0, (2, 4)),
    ("detached", 0.14, "RD02", ("detached house", "link-detached"), 1.6, (3, 6)),
    ("flat", 0.24, "RD06", ("purpose-built flat", "converted flat", "penthouse"), 0.7, (1, 3)),
    ("bungalow", 0.06, "RD02", ("detached bungalow", "semi-detached bungalow"), 1.05, (2, 3)),
    ("maisonette", 0.04, "RD06", ("maisonette",), 0.75, (1, 3)),
)

#: First words of street names.
STREET_NAMES = (
    "High", "Station", "Church", "Victoria", "Park", "Queen's", "King's", "Mill", "Green", "Manor",
    "Albert", "Grange", "School", "Chapel", "York", "Windsor", "Springfield", "Richmond", "Oak",
    "Cedar", "Elm", "Beech", "Alexandra", "Clarence", "Castle", "Bridge", "Market", "North",
    "Orchard", "Highfield", "Westfield", "Kingsway", "Stanley", "Grosvenor", "Belmont", "Chestnut",
)  # fmt: skip
#: Last words of street names.
STREET_SUFFIXES = ("Street", "Road", "Lane", "Avenue", "Close", "Drive", "Gardens", "Terrace")
#: Names of houses ("Rose Cottage, 4 Mill Lane" or "The Old Rectory, Mill Lane").
HOUSE_NAMES = (
    "Rose Cottage", "The Old Rectory", "Ivy House", "The Laurels", "Hillside", "Woodlands",
    "The Old Forge", "Orchard Cottage", "Holly Lodge", "The Coach House", "Meadow View", "Fairview",
)  # fmt: skip
#: Names of buildings of flats ("Flat 3, Oak House, 12 Mill Lane").
BUILDING_NAMES = (
    "Oak House", "Victoria Court", "Mill House", "Kings Court", "Alexandra Mansions",
    "Riverside House", "Albion Works", "St John's Court", "Regent House", "The Maltings",
)  # fmt: skip
#: Letters used in the inward code of a UK postcode (no C, I, K, M, O, V).
INCODE_LETTERS = "ABDEFGHJLNPQRSTUWXYZ"
#: Council tax band -> its charge in ninths of the band D charge.
BAND_RATIOS = {"A": 6, "B": 7, "C": 8, "D": 9, "E": 11, "F": 13, "G": 15, "H": 18}
#: Upper bound of estimated value (pounds, scaled to region) for each council tax band.
BAND_LIMITS = (
    ("A", 0.78), ("B", 0.97), ("C", 1.19), ("D", 1.47), ("E", 2.0), ("F", 2.8), ("G", 3.6),
)  # fmt: skip
#: The ``tags`` of a record (each set on about 6% of records; ``newBuild`` by year built).
TAGS = ("newBuild", "chainFree", "auction", "sharedOwnership", "retirement", "cashBuyersOnly",
        "investment")  # fmt: skip
