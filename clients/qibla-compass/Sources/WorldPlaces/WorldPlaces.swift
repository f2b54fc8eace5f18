// SPDX-License-Identifier: Apache-2.0
// libgweather-4: the only file that calls it. Its world database (the one GNOME Weather and
// Clocks use: about 4,200 cities, each with a region and country, names translated through its
// gettext catalogues) read once into ``Place`` values for the pure search in CompassModel.
import CGWeather
import CompassModel

public enum WorldPlaces {
    /// Every city of the database, names in the user's language (the process's locale, set before
    /// the first call: libgweather keeps the world and its names once read).
    public static func cities() -> [Place] {
        guard let world = gweather_location_get_world() else { return [] }
        var places: [Place] = []
        places.reserveCapacity(4_300)
        collect(world, region: "", country: "", into: &places)
        return places
    }

    private static func collect(_ location: OpaquePointer, region: String, country: String, into places: inout [Place]) {
        var region = region, country = country
        switch gweather_location_get_level(location) {
        case GWEATHER_LOCATION_COUNTRY: country = text(gweather_location_get_name(location))
        case GWEATHER_LOCATION_ADM1: region = text(gweather_location_get_name(location))
        case GWEATHER_LOCATION_CITY:
            guard gweather_location_has_coords(location) != 0 else { return }
            var latitude = 0.0, longitude = 0.0
            gweather_location_get_coords(location, &latitude, &longitude)   // degrees (libgweather 4)
            guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else { return }
            places.append(Place(name: text(gweather_location_get_name(location)),
                                englishName: text(gweather_location_get_english_name(location)),
                                region: region, country: country, latitudeDegrees: latitude, longitudeDegrees: longitude))
            return   // a city's children are its weather stations
        default: break
        }
        // next_child returns a new reference and releases the one it was given.
        var child = gweather_location_next_child(location, nil)
        while let current = child {
            collect(current, region: region, country: country, into: &places)
            child = gweather_location_next_child(location, current)
        }
    }

    private static func text(_ s: UnsafePointer<CChar>?) -> String { s.map { String(cString: $0) } ?? "" }
}
