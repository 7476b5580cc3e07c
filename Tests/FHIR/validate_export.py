"""`wearhouse export --format fhir` against the FHIR models of the `fhir.resources` package (R4B, whose
Observation is R4's): every line parses as an Observation, the vital signs carry their profile, LOINC codes,
category and UCUM units, category samples are coded values, not quantities, and a workout's route is a GeoJSON
attachment of its locations. Run by `make test-fhir`."""

import base64
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
# A run with a route of three locations, the last without altitude or speed.
WORKOUT = {
    "type": "workout", "start": "2025-01-01T08:00:00Z", "end": "2025-01-01T08:30:00Z", "source": "com.example.run",
    "activity_type": "running", "duration_s": 1800, "total_distance_m": 5000,
    "routes": [{"locations": [
        ["2025-01-01T08:00:00Z", 51.5, -0.1, 12.5, 4.0, 3.0, 2.5, 90.0],
        ["2025-01-01T08:00:01.500Z", 51.50001, -0.10002, 12.75, 4.0, 3.0, 2.6, 91.0],
        ["2025-01-01T08:00:03Z", 51.50002, -0.10004, None, 5.0, None, None, None],
    ]}],
}


def check_route(observation, failures):
    """The workout's route extension: a GeoJSON Feature whose LineString and times are the locations imported."""
    routes = [extension for extension in observation.extension or [] if extension.url == "urn:wearhouse:workout-route"]
    if len(routes) != 1 or routes[0].valueAttachment is None:
        failures.append(f"workout: {len(routes)} route extensions with an attachment, not 1")
        return
    attachment = routes[0].valueAttachment
    if attachment.contentType != "application/geo+json":
        failures.append(f"workout route: content type {attachment.contentType}")
    # fhir.resources gives base64Binary decoded, as bytes; else it is the text.
    data = attachment.data
    feature = json.loads(data if isinstance(data, bytes) else base64.b64decode(data))
    locations = WORKOUT["routes"][0]["locations"]
    expected = [[lon, lat] + ([altitude] if altitude is not None else []) for _, lat, lon, altitude, *_ in locations]
    if feature["type"] != "Feature" or feature["geometry"]["type"] != "LineString":
        failures.append("workout route: not a GeoJSON Feature with a LineString")
    elif feature["geometry"]["coordinates"] != expected:
        failures.append(f"workout route: positions {feature['geometry']['coordinates']}, not {expected}")
    if feature["properties"]["times"] != ["2025-01-01T08:00:00.000Z", "2025-01-01T08:00:01.500Z",
                                          "2025-01-01T08:00:03.000Z"]:
        failures.append(f"workout route: times {feature['properties']['times']}")
    if feature["properties"]["speed_m_per_s"] != [2.5, 2.6, None]:
        failures.append(f"workout route: speeds {feature['properties']['speed_m_per_s']}")


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
        lines.append(json.dumps(WORKOUT))
        subprocess.run([WEARHOUSE, "import-samples", "--store", store, "-"], input="\n".join(lines) + "\n",
                       text=True, check=True, capture_output=True)
        exported = subprocess.run(
            [WEARHOUSE, "export", "--store", store, "--format", "fhir", "--type",
             ",".join([s[0] for s in SAMPLES] + ["workout"])],
            text=True, check=True, capture_output=True).stdout.splitlines()
    if len(exported) != len(SAMPLES) + 1:
        failures.append(f"{len(exported)} observations for {len(SAMPLES)} samples and a workout")
    for line in exported:
        observation = Observation.model_validate_json(line)
        kind = observation.code.text
        if kind == "workout":
            check_route(observation, failures)
            continue
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
    print(f"fhir: {len(exported)} observations (a workout with its route among them) parsed as FHIR R4 Observations, "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
