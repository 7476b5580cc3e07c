"""`wearhouse export --format fhir` against the FHIR models of the `fhir.resources` package (R4B, whose
Observation is R4's): every line parses as an Observation, the vital signs carry their profile, LOINC codes,
category and UCUM units, and category samples are coded values, not quantities. Run by `make test-fhir`."""

import json
import os
import subprocess
import sys
import tempfile

from fhir.resources.R4B.observation import Observation

WEARHOUSE = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/wearhouse"

SAMPLES = [
    ("bodyMass", 72.5, None), ("height", 1.8, None), ("bodyTemperature", 36.8, None),
    ("oxygenSaturation", 0.97, None), ("heartRate", 61, None), ("respiratoryRate", 14, None),
    ("sleepAnalysis", "asleepDeep", "2025-01-01T02:00:00Z"), ("bodyFatPercentage", 0.215, None),
    ("stepCount", 900, "2025-01-01T07:10:00Z"),
]
# type: (profile, LOINC codes, UCUM code, value)
VITALS = {
    "bodyMass": ("bodyweight", ["29463-7"], "kg", 72.5),
    "height": ("bodyheight", ["8302-2"], "cm", 180),
    "bodyTemperature": ("bodytemp", ["8310-5"], "Cel", 36.8),
    "oxygenSaturation": ("oxygensat", ["2708-6", "59408-5"], "%", 97),
    "heartRate": ("heartrate", ["8867-4"], "/min", 61),
    "respiratoryRate": ("resprate", ["9279-1"], "/min", 14),
}


def main():
    failures = []
    with tempfile.TemporaryDirectory() as directory:
        store = os.path.join(directory, "health.db")
        lines = []
        for kind, value, end in SAMPLES:
            start = "2025-01-01T00:00:00Z" if kind == "sleepAnalysis" else "2025-01-01T07:00:00Z"
            sample = {"type": kind, "start": start, "value": value, "source": "com.example.app", "subject": "ann"}
            if end:
                sample["end"] = end
            lines.append(json.dumps(sample))
        subprocess.run([WEARHOUSE, "import-samples", "--store", store, "-"], input="\n".join(lines) + "\n",
                       text=True, check=True, capture_output=True)
        exported = subprocess.run(
            [WEARHOUSE, "export", "--store", store, "--format", "fhir", "--type", ",".join(s[0] for s in SAMPLES)],
            text=True, check=True, capture_output=True).stdout.splitlines()
    if len(exported) != len(SAMPLES):
        failures.append(f"{len(exported)} observations for {len(SAMPLES)} samples")
    for line in exported:
        observation = Observation.model_validate_json(line)
        kind = observation.code.text
        category = observation.category[0].coding[0].code
        if kind in VITALS:
            profile, codes, unit, value = VITALS[kind]
            got = [coding.code for coding in observation.code.coding]
            checks = [
                (observation.meta is not None and observation.meta.profile
                 == [f"http://hl7.org/fhir/StructureDefinition/{profile}"], "profile"),
                (got == codes, f"codes {got}"), (category == "vital-signs", f"category {category}"),
                (observation.valueQuantity.code == unit, f"unit {observation.valueQuantity.code}"),
                (observation.valueQuantity.system == "http://unitsofmeasure.org", "UCUM system"),
                (float(observation.valueQuantity.value) == value, f"value {observation.valueQuantity.value}"),
            ]
            failures += [f"{kind}: {what}" for ok, what in checks if not ok]
        elif kind == "sleepAnalysis":
            concept = observation.valueCodeableConcept
            if observation.valueQuantity is not None or concept is None or concept.coding[0].code != "asleepDeep":
                failures.append("sleepAnalysis: not a coded value asleepDeep")
        elif kind == "bodyFatPercentage" and float(observation.valueQuantity.value) != 21.5:
            failures.append(f"bodyFatPercentage: {observation.valueQuantity.value} %, not 21.5")
    for failure in failures:
        print("FAIL", failure)
    print(f"fhir: {len(exported)} observations parsed as FHIR R4 Observations, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
