/** The code systems reimbursement data uses (FEST, the Norwegian medicines catalogue). */
export const CODE_SYSTEMS = {
  legalBasis: 'urn:oid:2.16.578.1.12.4.1.1.7427',
  reimbursementGroup: 'urn:oid:2.16.578.1.12.4.1.1.7451',
  icpc2: 'urn:oid:2.16.578.1.12.4.1.1.7170',
  icd10: 'urn:oid:2.16.578.1.12.4.1.1.7110',
  atc: 'urn:oid:2.16.578.1.12.4.1.1.7180',
  /**
   * The decisions identify medicines by 6-digit varenummer but name no code system for it; this
   * URN is the sample data's own choice, not an official identifier.
   */
  varenummer: 'urn:nhp:fest:varenummer',
} as const;

/** Legal basis codes (7427) with their display texts. */
export const LEGAL_BASIS: Record<string, string> = {
  '200': '§5-14 §2',
  '300': '§5-14 §3',
  '301': '§3a',
  '302': '§3b',
  '400': '§4',
  '500': '§5',
  '600': '§6',
};

/** A condition as both an ICPC-2 (primary care) and an ICD-10 (specialist care) code. */
export interface Condition {
  icpc2: readonly [code: string, display: string];
  icd10: readonly [code: string, display: string];
}

export const CONDITIONS = {
  diabetes1: { icpc2: ['T89', 'Diabetes type 1'], icd10: ['E10', 'Diabetes mellitus type 1'] },
  diabetes2: { icpc2: ['T90', 'Diabetes type 2'], icd10: ['E11', 'Diabetes mellitus type 2'] },
  hypertension: {
    icpc2: ['K86', 'Hypertensjon ukomplisert'],
    icd10: ['I10', 'Essensiell (primær) hypertensjon'],
  },
  lipids: {
    icpc2: ['T93', 'Lipidforstyrrelse'],
    icd10: ['E78', 'Forstyrrelser i lipoproteinmetabolisme og andre lipidemier'],
  },
  atrialFibrillation: {
    icpc2: ['K78', 'Atrieflimmer/flutter'],
    icd10: ['I48', 'Atrieflimmer og atrieflutter'],
  },
  thrombosis: { icpc2: ['K94', 'Dyp venetrombose'], icd10: ['I80', 'Flebitt og tromboflebitt'] },
  pulmonaryEmbolism: { icpc2: ['K93', 'Lungeemboli'], icd10: ['I26', 'Lungeemboli'] },
  heartFailure: { icpc2: ['K77', 'Hjertesvikt'], icd10: ['I50', 'Hjertesvikt'] },
  angina: { icpc2: ['K74', 'Iskemisk hjertesykdom med angina'], icd10: ['I20', 'Angina pectoris'] },
  asthma: { icpc2: ['R96', 'Astma'], icd10: ['J45', 'Astma'] },
  copd: {
    icpc2: ['R95', 'Kronisk obstruktiv lungesykdom'],
    icd10: ['J44', 'Annen kronisk obstruktiv lungesykdom'],
  },
  depression: { icpc2: ['P76', 'Depressiv lidelse'], icd10: ['F32', 'Depressiv episode'] },
  anxiety: { icpc2: ['P74', 'Angstlidelse'], icd10: ['F41', 'Andre angstlidelser'] },
  adhd: {
    icpc2: ['P81', 'Hyperkinetisk forstyrrelse'],
    icd10: ['F90', 'Hyperkinetiske forstyrrelser'],
  },
  schizophrenia: { icpc2: ['P72', 'Schizofreni'], icd10: ['F20', 'Schizofreni'] },
  bipolar: { icpc2: ['P73', 'Affektiv psykose'], icd10: ['F31', 'Bipolar affektiv lidelse'] },
  epilepsy: { icpc2: ['N88', 'Epilepsi'], icd10: ['G40', 'Epilepsi'] },
  parkinson: { icpc2: ['N87', 'Parkinsonisme'], icd10: ['G20', 'Parkinsons sykdom'] },
  migraine: { icpc2: ['N89', 'Migrene'], icd10: ['G43', 'Migrene'] },
  opioidDependence: {
    icpc2: ['P19', 'Misbruk av narkotiske stoffer'],
    icd10: ['F11', 'Psykiske lidelser og atferdsforstyrrelser som skyldes bruk av opioider'],
  },
  rheumatoidArthritis: {
    icpc2: ['L88', 'Revmatoid artritt/seropositiv'],
    icd10: ['M05', 'Seropositiv revmatoid artritt'],
  },
  psoriasis: { icpc2: ['S91', 'Psoriasis'], icd10: ['L40', 'Psoriasis'] },
  crohn: {
    icpc2: ['D94', 'Kronisk tarmbetennelse/ulcerøs kolitt'],
    icd10: ['K50', 'Crohns sykdom'],
  },
  ulcerativeColitis: {
    icpc2: ['D94', 'Kronisk tarmbetennelse/ulcerøs kolitt'],
    icd10: ['K51', 'Ulcerøs kolitt'],
  },
  hypothyroidism: { icpc2: ['T86', 'Hypotyreose/myksødem'], icd10: ['E03', 'Annen hypotyreose'] },
  osteoporosis: {
    icpc2: ['L95', 'Osteoporose'],
    icd10: ['M81', 'Osteoporose uten patologisk brudd'],
  },
  gout: { icpc2: ['T92', 'Urinsyregikt'], icd10: ['M10', 'Urinsyregikt'] },
  prostate: { icpc2: ['Y85', 'Benign prostatahypertrofi'], icd10: ['N40', 'Prostatahyperplasi'] },
  glaucoma: { icpc2: ['F93', 'Glaukom'], icd10: ['H40', 'Glaukom'] },
  reflux: { icpc2: ['D84', 'Øsofagussykdom'], icd10: ['K21', 'Gastroøsofageal reflukssykdom'] },
  rhinitis: {
    icpc2: ['R97', 'Allergisk rinitt'],
    icd10: ['J30', 'Vasomotorisk og allergisk rinitt'],
  },
  multipleSclerosis: { icpc2: ['N86', 'Multippel sklerose'], icd10: ['G35', 'Multippel sklerose'] },
  breastCancer: { icpc2: ['X76', 'Brystkreft'], icd10: ['C50', 'Ondartet svulst i bryst'] },
  leukemia: { icpc2: ['B73', 'Leukemi'], icd10: ['C92', 'Myelogen leukemi'] },
  eczema: { icpc2: ['S87', 'Atopisk eksem'], icd10: ['L20', 'Atopisk dermatitt'] },
  ironDeficiency: { icpc2: ['B80', 'Jernmangelanemi'], icd10: ['D50', 'Jernmangelanemi'] },
  b12Deficiency: {
    icpc2: ['B81', 'Anemi, vitamin B12/folat'],
    icd10: ['D51', 'Vitamin B12-mangelanemi'],
  },
  constipation: {
    icpc2: ['D12', 'Forstoppelse'],
    icd10: ['K59', 'Andre funksjonelle tarmsykdommer'],
  },
  menopause: {
    icpc2: ['X11', 'Menopausesymptomer/-plager'],
    icd10: ['N95', 'Menopausale og andre perimenopausale forstyrrelser'],
  },
  vitaminD: { icpc2: ['T91', 'Vitaminmangel/ernæringssvikt'], icd10: ['E55', 'Vitamin D-mangel'] },
  hepatitisC: { icpc2: ['D72', 'Viral hepatitt'], icd10: ['B18', 'Kronisk virushepatitt'] },
  hiv: {
    icpc2: ['B90', 'HIV-infeksjon/AIDS'],
    icd10: ['B20', 'HIV-sykdom som gir infeksjonssykdommer og parasittsykdommer'],
  },
  cancerPain: {
    icpc2: ['A01', 'Smerte generell/flere steder'],
    icd10: ['R52', 'Smerte, ikke klassifisert annet sted'],
  },
  arrhythmia: { icpc2: ['K79', 'Paroksysmal takykardi'], icd10: ['I47', 'Paroksysmal takykardi'] },
  oedema: {
    icpc2: ['K07', 'Hovne ankler/ødem'],
    icd10: ['R60', 'Ødem, ikke klassifisert annet sted'],
  },
  prostateCancer: { icpc2: ['Y77', 'Prostatakreft'], icd10: ['C61', 'Ondartet svulst i prostata'] },
} as const satisfies Record<string, Condition>;
export type ConditionKey = keyof typeof CONDITIONS;

/** A substance (ATC level 5) with products seen in FEST and the conditions it is reimbursed for. */
export interface Substance {
  atc: string;
  name: string;
  products: readonly string[];
  conditions: readonly ConditionKey[];
}

const s = (atc: string, name: string, products: string, conditions: ConditionKey[]): Substance => ({
  atc,
  name,
  products: products.split(';'),
  conditions,
});

export const SUBSTANCES: readonly Substance[] = [
  s(
    'A10AE04',
    'insulin glargin',
    'Lantus inj 100 E/ml;Abasaglar inj 100 E/ml;Toujeo inj 300 E/ml',
    ['diabetes1', 'diabetes2'],
  ),
  s('A10AE05', 'insulin detemir', 'Levemir inj 100 E/ml', ['diabetes1', 'diabetes2']),
  s('A10AE06', 'insulin degludek', 'Tresiba inj 100 E/ml;Tresiba inj 200 E/ml', [
    'diabetes1',
    'diabetes2',
  ]),
  s('A10AB05', 'insulin aspart', 'NovoRapid inj 100 E/ml;Fiasp inj 100 E/ml', [
    'diabetes1',
    'diabetes2',
  ]),
  s('A10AB04', 'insulin lispro', 'Humalog inj 100 E/ml;Lyumjev inj 100 E/ml', [
    'diabetes1',
    'diabetes2',
  ]),
  s(
    'A10BA02',
    'metformin',
    'Glucophage tab 500 mg;Metformin Teva tab 850 mg;Metformin Orion tab 1 g',
    ['diabetes2'],
  ),
  s('A10BJ02', 'liraglutid', 'Victoza inj 6 mg/ml', ['diabetes2']),
  s('A10BJ06', 'semaglutid', 'Ozempic inj 1,34 mg/ml;Rybelsus tab 7 mg', ['diabetes2']),
  s('A10BJ05', 'dulaglutid', 'Trulicity inj 1,5 mg', ['diabetes2']),
  s('A10BK01', 'dapagliflozin', 'Forxiga tab 10 mg', ['diabetes2', 'heartFailure']),
  s('A10BK03', 'empagliflozin', 'Jardiance tab 10 mg;Jardiance tab 25 mg', [
    'diabetes2',
    'heartFailure',
  ]),
  s('A10BH01', 'sitagliptin', 'Januvia tab 100 mg;Sitagliptin Sandoz tab 100 mg', ['diabetes2']),
  s('A10BB12', 'glimepirid', 'Amaryl tab 2 mg;Glimepirid Krka tab 3 mg', ['diabetes2']),
  s(
    'C10AA05',
    'atorvastatin',
    'Lipitor tab 20 mg;Atorvastatin Sandoz tab 40 mg;Atorvastatin Teva tab 80 mg',
    ['lipids', 'angina'],
  ),
  s('C10AA01', 'simvastatin', 'Zocor tab 20 mg;Simvastatin Actavis tab 40 mg', [
    'lipids',
    'angina',
  ]),
  s('C10AA07', 'rosuvastatin', 'Crestor tab 10 mg;Rosuvastatin Krka tab 20 mg', ['lipids']),
  s('C10AX09', 'ezetimib', 'Ezetrol tab 10 mg;Ezetimib Stada tab 10 mg', ['lipids']),
  s('C10AX13', 'evolokumab', 'Repatha inj 140 mg', ['lipids']),
  s('B01AF01', 'rivaroksaban', 'Xarelto tab 20 mg;Xarelto tab 15 mg', [
    'atrialFibrillation',
    'thrombosis',
    'pulmonaryEmbolism',
  ]),
  s('B01AF02', 'apiksaban', 'Eliquis tab 5 mg;Eliquis tab 2,5 mg', [
    'atrialFibrillation',
    'thrombosis',
    'pulmonaryEmbolism',
  ]),
  s('B01AF03', 'edoksaban', 'Lixiana tab 60 mg', ['atrialFibrillation', 'thrombosis']),
  s('B01AE07', 'dabigatraneteksilat', 'Pradaxa kaps 150 mg;Pradaxa kaps 110 mg', [
    'atrialFibrillation',
    'thrombosis',
  ]),
  s('B01AC04', 'klopidogrel', 'Plavix tab 75 mg;Clopidogrel Krka tab 75 mg', ['angina']),
  s('B01AC24', 'tikagrelor', 'Brilique tab 90 mg', ['angina']),
  s('B01AA03', 'warfarin', 'Marevan tab 2,5 mg', ['atrialFibrillation', 'thrombosis']),
  s('B01AB05', 'enoksaparin', 'Klexane inj 100 mg/ml;Inhixa inj 100 mg/ml', [
    'thrombosis',
    'pulmonaryEmbolism',
  ]),
  s('C07AB07', 'bisoprolol', 'Emconcor tab 5 mg;Bisoprolol Orion tab 2,5 mg', [
    'hypertension',
    'heartFailure',
    'angina',
  ]),
  s('C07AB02', 'metoprolol', 'Selo-Zok depottab 50 mg;Metoprolol Sandoz depottab 100 mg', [
    'hypertension',
    'angina',
    'heartFailure',
  ]),
  s('C09AA05', 'ramipril', 'Triatec tab 5 mg;Ramipril Actavis tab 10 mg', [
    'hypertension',
    'heartFailure',
  ]),
  s('C09AA02', 'enalapril', 'Renitec tab 10 mg;Enalapril Krka tab 20 mg', [
    'hypertension',
    'heartFailure',
  ]),
  s('C09CA01', 'losartan', 'Cozaar tab 50 mg;Losartan Teva tab 100 mg', ['hypertension']),
  s('C09CA06', 'kandesartan', 'Atacand tab 8 mg;Candesartan Stada tab 16 mg', [
    'hypertension',
    'heartFailure',
  ]),
  s('C09DX04', 'valsartan og sakubitril', 'Entresto tab 97 mg/103 mg;Entresto tab 49 mg/51 mg', [
    'heartFailure',
  ]),
  s('C08CA01', 'amlodipin', 'Norvasc tab 5 mg;Amlodipin Bluefish tab 10 mg', [
    'hypertension',
    'angina',
  ]),
  s('C08CA13', 'lerkanidipin', 'Zanidip tab 10 mg', ['hypertension']),
  s('C03CA01', 'furosemid', 'Furix tab 40 mg;Diural tab 40 mg', ['heartFailure', 'oedema']),
  s('C03DA01', 'spironolakton', 'Spirix tab 25 mg', ['heartFailure', 'oedema', 'hypertension']),
  s('C03AA03', 'hydroklortiazid', 'Esidrex tab 25 mg', ['hypertension', 'oedema']),
  s('C01AA05', 'digoksin', 'Digoxin BioPhausia tab 0,13 mg', [
    'atrialFibrillation',
    'heartFailure',
  ]),
  s('C01BD01', 'amiodaron', 'Cordarone tab 200 mg', ['arrhythmia', 'atrialFibrillation']),
  s('C01DA14', 'isosorbidmononitrat', 'Imdur depottab 60 mg', ['angina']),
  s(
    'R03AK06',
    'salmeterol og flutikason',
    'Seretide Diskus inh.pulv 50/250 µg;Airflusal Forspiro inh.pulv 50/500 µg',
    ['asthma', 'copd'],
  ),
  s(
    'R03AK07',
    'formoterol og budesonid',
    'Symbicort Turbuhaler inh.pulv 160/4,5 µg;Bufomix Easyhaler inh.pulv 160/4,5 µg',
    ['asthma', 'copd'],
  ),
  s('R03AK10', 'vilanterol og flutikasonfuroat', 'Relvar Ellipta inh.pulv 92/22 µg', [
    'asthma',
    'copd',
  ]),
  s(
    'R03AC02',
    'salbutamol',
    'Ventoline inh.aerosol 0,1 mg/dose;Airomir Autohaler inh.aerosol 0,1 mg/dose',
    ['asthma', 'copd'],
  ),
  s('R03AC13', 'formoterol', 'Oxis Turbuhaler inh.pulv 9 µg', ['asthma', 'copd']),
  s('R03BB04', 'tiotropiumbromid', 'Spiriva inh.pulv 18 µg;Spiriva Respimat inh.væske 2,5 µg', [
    'copd',
    'asthma',
  ]),
  s('R03AL03', 'vilanterol og umeklidiniumbromid', 'Anoro Ellipta inh.pulv 55/22 µg', ['copd']),
  s(
    'R03BA02',
    'budesonid',
    'Pulmicort Turbuhaler inh.pulv 200 µg;Giona Easyhaler inh.pulv 400 µg',
    ['asthma'],
  ),
  s('R03BA05', 'flutikason', 'Flutide Diskus inh.pulv 250 µg', ['asthma']),
  s('R03DC03', 'montelukast', 'Singulair tab 10 mg;Montelukast Teva tyggetab 5 mg', ['asthma']),
  s('R06AE07', 'cetirizin', 'Zyrtec tab 10 mg;Cetirizin Mylan tab 10 mg', ['rhinitis']),
  s('R06AX27', 'desloratadin', 'Aerius tab 5 mg', ['rhinitis']),
  s('N06AB04', 'citalopram', 'Cipramil tab 20 mg;Citalopram Bluefish tab 20 mg', [
    'depression',
    'anxiety',
  ]),
  s('N06AB10', 'escitalopram', 'Cipralex tab 10 mg;Escitalopram Krka tab 10 mg', [
    'depression',
    'anxiety',
  ]),
  s('N06AB06', 'sertralin', 'Zoloft tab 50 mg;Sertralin Actavis tab 100 mg', [
    'depression',
    'anxiety',
  ]),
  s('N06AB03', 'fluoksetin', 'Fontex kaps 20 mg', ['depression']),
  s('N06AX11', 'mirtazapin', 'Remeron tab 30 mg;Mirtazapin Orion tab 15 mg', ['depression']),
  s('N06AX16', 'venlafaksin', 'Efexor Depot depotkaps 75 mg;Venlafaxin Teva depotkaps 150 mg', [
    'depression',
    'anxiety',
  ]),
  s('N06AX21', 'duloksetin', 'Cymbalta enterokaps 60 mg', ['depression', 'anxiety']),
  s('N06AX12', 'bupropion', 'Wellbutrin Retard depottab 150 mg', ['depression']),
  s(
    'N06BA04',
    'metylfenidat',
    'Ritalin tab 10 mg;Concerta depottab 36 mg;Medikinet depotkaps 20 mg',
    ['adhd'],
  ),
  s('N06BA09', 'atomoksetin', 'Strattera kaps 40 mg', ['adhd']),
  s('N06BA12', 'lisdeksamfetamin', 'Elvanse kaps 50 mg', ['adhd']),
  s('N06BA02', 'deksamfetamin', 'Attentin tab 5 mg', ['adhd']),
  s('N05AH03', 'olanzapin', 'Zyprexa tab 10 mg;Olanzapin Krka tab 5 mg', [
    'schizophrenia',
    'bipolar',
  ]),
  s('N05AH04', 'kvetiapin', 'Seroquel tab 25 mg;Seroquel Depot depottab 300 mg', [
    'schizophrenia',
    'bipolar',
  ]),
  s('N05AX08', 'risperidon', 'Risperdal tab 1 mg;Risperidon Teva tab 2 mg', [
    'schizophrenia',
    'bipolar',
  ]),
  s('N05AX12', 'aripiprazol', 'Abilify tab 10 mg;Abilify Maintena inj 400 mg', [
    'schizophrenia',
    'bipolar',
  ]),
  s('N05AN01', 'litium', 'Lithionit depottab 42 mg', ['bipolar']),
  s('N03AX09', 'lamotrigin', 'Lamictal tab 100 mg;Lamotrigin Orion tab 50 mg', [
    'epilepsy',
    'bipolar',
  ]),
  s('N03AX14', 'levetiracetam', 'Keppra tab 500 mg;Levetiracetam Accord tab 1000 mg', ['epilepsy']),
  s('N03AX16', 'pregabalin', 'Lyrica kaps 75 mg;Pregabalin Sandoz kaps 150 mg', [
    'epilepsy',
    'anxiety',
  ]),
  s('N03AF01', 'karbamazepin', 'Tegretol Retard depottab 200 mg', ['epilepsy']),
  s('N03AG01', 'valproat', 'Orfiril Retard depotkaps 300 mg', ['epilepsy', 'bipolar']),
  s('N03AX18', 'lakosamid', 'Vimpat tab 100 mg', ['epilepsy']),
  s('N04BA02', 'levodopa og dekarboksylasehemmer', 'Madopar kaps 100/25 mg;Sinemet tab 100/25 mg', [
    'parkinson',
  ]),
  s('N04BC05', 'pramipeksol', 'Sifrol tab 0,18 mg;Pramipexol Krka depottab 0,52 mg', ['parkinson']),
  s('N04BC04', 'ropinirol', 'Requip Depot depottab 4 mg', ['parkinson']),
  s('N04BD02', 'rasagilin', 'Azilect tab 1 mg', ['parkinson']),
  s('N02CC01', 'sumatriptan', 'Imigran tab 50 mg;Sumatriptan Bluefish tab 100 mg', ['migraine']),
  s('N02CC03', 'zolmitriptan', 'Zomig Rapimelt smeltetab 2,5 mg', ['migraine']),
  s('N02CC07', 'frovatriptan', 'Migard tab 2,5 mg', ['migraine']),
  s('N02CD01', 'erenumab', 'Aimovig inj 140 mg', ['migraine']),
  s('N02AA05', 'oksykodon', 'OxyContin depottab 10 mg;OxyNorm kaps 5 mg', ['cancerPain']),
  s('N02AA01', 'morfin', 'Dolcontin depottab 30 mg', ['cancerPain']),
  s('N02AB03', 'fentanyl', 'Durogesic depotplaster 25 µg/time', ['cancerPain']),
  s('N07BC02', 'metadon', 'Metadon Abcur mikst 1 mg/ml', ['opioidDependence']),
  s('N07BC51', 'buprenorfin, kombinasjoner', 'Suboxone sublingvaltab 8/2 mg', ['opioidDependence']),
  s('N07BC01', 'buprenorfin', 'Subutex sublingvaltab 8 mg;Buvidal depotinj 96 mg', [
    'opioidDependence',
  ]),
  s('N07XX09', 'dimetylfumarat', 'Tecfidera enterokaps 240 mg', ['multipleSclerosis']),
  s('L04AB01', 'etanercept', 'Enbrel inj 50 mg;Benepali inj 50 mg', [
    'rheumatoidArthritis',
    'psoriasis',
  ]),
  s('L04AB02', 'infliksimab', 'Remsima inj 120 mg', [
    'rheumatoidArthritis',
    'crohn',
    'ulcerativeColitis',
  ]),
  s('L04AB04', 'adalimumab', 'Humira inj 40 mg;Hyrimoz inj 40 mg;Amgevita inj 40 mg', [
    'rheumatoidArthritis',
    'psoriasis',
    'crohn',
  ]),
  s('L04AX03', 'metotreksat', 'Metex inj 10 mg;Metotreksat Teva tab 2,5 mg', [
    'rheumatoidArthritis',
    'psoriasis',
  ]),
  s('L04AC05', 'ustekinumab', 'Stelara inj 90 mg', ['psoriasis', 'crohn']),
  s('L04AA27', 'fingolimod', 'Gilenya kaps 0,5 mg', ['multipleSclerosis']),
  s('L04AA31', 'teriflunomid', 'Aubagio tab 14 mg', ['multipleSclerosis']),
  s('L04AA29', 'tofacitinib', 'Xeljanz tab 5 mg', ['rheumatoidArthritis', 'ulcerativeColitis']),
  s('L02BA01', 'tamoksifen', 'Nolvadex tab 20 mg;Tamoxifen Orion tab 20 mg', ['breastCancer']),
  s('L02BG04', 'letrozol', 'Femar tab 2,5 mg;Letrozol Accord tab 2,5 mg', ['breastCancer']),
  s('L02BG03', 'anastrozol', 'Arimidex tab 1 mg', ['breastCancer']),
  s('L02BB03', 'bikalutamid', 'Casodex tab 50 mg', ['prostateCancer']),
  s('L01EA01', 'imatinib', 'Glivec tab 400 mg;Imatinib Teva tab 100 mg', ['leukemia']),
  s('L01EA02', 'dasatinib', 'Sprycel tab 100 mg', ['leukemia']),
  s('A02BC01', 'omeprazol', 'Losec enterotab 20 mg;Omeprazol Actavis enterokaps 20 mg', ['reflux']),
  s('A02BC05', 'esomeprazol', 'Nexium enterotab 20 mg;Esomeprazol Krka enterokaps 40 mg', [
    'reflux',
  ]),
  s('A02BC02', 'pantoprazol', 'Somac enterotab 40 mg;Pantoprazol Sandoz enterotab 20 mg', [
    'reflux',
  ]),
  s('A07EC02', 'mesalazin', 'Asacol enterotab 800 mg;Pentasa depottab 1 g', [
    'ulcerativeColitis',
    'crohn',
  ]),
  s('A07EA06', 'budesonid', 'Entocort kaps 3 mg', ['crohn']),
  s('A06AD11', 'laktulose', 'Duphalac mikst 667 mg/ml', ['constipation']),
  s('A06AD65', 'makrogol, kombinasjoner', 'Movicol pulv til mikst', ['constipation']),
  s('A11CC05', 'kolekalsiferol', 'Nycoplus D-vitamin tab 20 µg', ['vitaminD', 'osteoporosis']),
  s('A12AX', 'kalsium, kombinasjoner med vitamin D', 'Calcigran Forte tyggetab 1000 mg/800 IE', [
    'osteoporosis',
  ]),
  s('B03AA07', 'jern(II)sulfat', 'Duroferon depottab 100 mg', ['ironDeficiency']),
  s('B03BA01', 'cyanokobalamin', 'Behepan inj 1 mg/ml;Betolvex tab 1 mg', ['b12Deficiency']),
  s('H03AA01', 'levotyroksinnatrium', 'Levaxin tab 50 µg;Euthyrox tab 100 µg', ['hypothyroidism']),
  s('H02AB06', 'prednisolon', 'Prednisolon Actavis tab 5 mg', ['rheumatoidArthritis', 'asthma']),
  s('M05BA04', 'alendronsyre', 'Fosamax tab 70 mg;Alendronat Sandoz tab 70 mg', ['osteoporosis']),
  s('M05BX04', 'denosumab', 'Prolia inj 60 mg', ['osteoporosis']),
  s('M04AA01', 'allopurinol', 'Zyloric tab 100 mg;Allopurinol Orion tab 300 mg', ['gout']),
  s('M04AA03', 'febuksostat', 'Adenuric tab 80 mg', ['gout']),
  s('G04CA02', 'tamsulosin', 'Omnic depotkaps 0,4 mg;Tamsulosin Stada depotkaps 0,4 mg', [
    'prostate',
  ]),
  s('G04CB01', 'finasterid', 'Proscar tab 5 mg', ['prostate']),
  s('G03CA03', 'østradiol', 'Vagifem vagitab 10 µg;Estrogel gel 0,6 mg/g', ['menopause']),
  s('S01EE01', 'latanoprost', 'Xalatan øyedr 50 µg/ml;Latanoprost Bluefish øyedr 50 µg/ml', [
    'glaucoma',
  ]),
  s('S01ED01', 'timolol', 'Timosan øyedr 2,5 mg/ml', ['glaucoma']),
  s('S01EC04', 'brinzolamid', 'Azopt øyedr 10 mg/ml', ['glaucoma']),
  s('D05BB02', 'acitretin', 'Neotigason kaps 25 mg', ['psoriasis']),
  s('D07AC01', 'betametason', 'Betnovat krem 0,1 %;Betnovat salve 0,1 %', ['psoriasis', 'eczema']),
  s('D11AH01', 'takrolimus', 'Protopic salve 0,1 %', ['eczema']),
  s('D11AH05', 'dupilumab', 'Dupixent inj 300 mg', ['eczema', 'asthma']),
  s('J05AP55', 'sofosbuvir og velpatasvir', 'Epclusa tab 400/100 mg', ['hepatitisC']),
  s('J05AR13', 'lamivudin, abakavir og dolutegravir', 'Triumeq tab 50/600/300 mg', ['hiv']),
  s(
    'J05AR03',
    'tenofovirdisoproksil og emtricitabin',
    'Emtricitabine/Tenofovir disoproxil Teva tab 200/245 mg',
    ['hiv'],
  ),
];
