# Regenerates lenient-fuzz.jsonl (first 1000 records): random, mostly malformed texts and pi
# 0.85.1's parseStreamingJson of each ("pi"). Run from this directory:
#   python3 fuzz.py && PI_AI=~/.cache/pi-reference/node_modules/@earendil-works/pi-ai node fuzz.mjs
import json
import random

random.seed(7)
alphabet = list('{}[]",:0123456789eE.+- abnrtu\\\n') + [
    'true', 'null', 'false', '"k"', '"v"', '{"a":', '[1,', 'NaN', 'Infinity',
    '\\u00e9', '\\ud83d', 'é',
]
inputs = []
for _ in range(1000):
    text = ''.join(random.choice(alphabet) for _ in range(random.randint(0, 25)))
    if random.random() < 0.6:
        text = '{' + text
    inputs.append(text)
json.dump(inputs, open('/tmp/partial-json-fuzz-inputs.json', 'w'))
