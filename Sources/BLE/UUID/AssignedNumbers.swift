/// Names of the Bluetooth SIG assigned numbers most devices use (services, characteristics,
/// descriptors), from the Assigned Numbers document.
enum AssignedNumbers {
    static let names: [UInt16: String] = [
        // Services
        0x1800: "Generic Access", 0x1801: "Generic Attribute", 0x1802: "Immediate Alert",
        0x1803: "Link Loss", 0x1804: "Tx Power", 0x1805: "Current Time", 0x1806: "Reference Time Update",
        0x1807: "Next DST Change", 0x1808: "Glucose", 0x1809: "Health Thermometer",
        0x180A: "Device Information", 0x180D: "Heart Rate", 0x180E: "Phone Alert Status",
        0x180F: "Battery", 0x1810: "Blood Pressure", 0x1811: "Alert Notification",
        0x1812: "Human Interface Device", 0x1813: "Scan Parameters", 0x1814: "Running Speed and Cadence",
        0x1815: "Automation IO", 0x1816: "Cycling Speed and Cadence", 0x1818: "Cycling Power",
        0x1819: "Location and Navigation", 0x181A: "Environmental Sensing", 0x181B: "Body Composition",
        0x181C: "User Data", 0x181D: "Weight Scale", 0x181E: "Bond Management",
        0x181F: "Continuous Glucose Monitoring", 0x1820: "Internet Protocol Support",
        0x1821: "Indoor Positioning", 0x1822: "Pulse Oximeter", 0x1823: "HTTP Proxy",
        0x1824: "Transport Discovery", 0x1825: "Object Transfer", 0x1826: "Fitness Machine",
        0x1827: "Mesh Provisioning", 0x1828: "Mesh Proxy", 0x183A: "Insulin Delivery",
        0xFE59: "Nordic DFU", 0xFEAA: "Eddystone", 0xFE95: "Xiaomi", 0xFE2C: "Google Fast Pair",
        0xFD6F: "Exposure Notification", 0xFEED: "Tile",
        // Characteristics
        0x2A00: "Device Name", 0x2A01: "Appearance", 0x2A04: "Peripheral Preferred Connection Parameters",
        0x2A05: "Service Changed", 0x2A06: "Alert Level", 0x2A07: "Tx Power Level", 0x2A08: "Date Time",
        0x2A19: "Battery Level", 0x2A1C: "Temperature Measurement", 0x2A1D: "Temperature Type",
        0x2A1E: "Intermediate Temperature", 0x2A21: "Measurement Interval", 0x2A23: "System ID",
        0x2A24: "Model Number String", 0x2A25: "Serial Number String", 0x2A26: "Firmware Revision String",
        0x2A27: "Hardware Revision String", 0x2A28: "Software Revision String",
        0x2A29: "Manufacturer Name String", 0x2A2B: "Current Time", 0x2A35: "Blood Pressure Measurement",
        0x2A37: "Heart Rate Measurement", 0x2A38: "Body Sensor Location", 0x2A39: "Heart Rate Control Point",
        0x2A4D: "Report", 0x2A50: "PnP ID", 0x2A53: "RSC Measurement", 0x2A5B: "CSC Measurement",
        0x2A5D: "Sensor Location", 0x2A63: "Cycling Power Measurement", 0x2A6D: "Pressure",
        0x2A6E: "Temperature", 0x2A6F: "Humidity", 0x2A9D: "Weight Measurement", 0x2AA6: "Central Address Resolution",
        0x2ACD: "Treadmill Data", 0x2AD2: "Indoor Bike Data", 0x2AD9: "Fitness Machine Control Point",
        // Descriptors
        0x2900: "Characteristic Extended Properties", 0x2901: "Characteristic User Description",
        0x2902: "Client Characteristic Configuration", 0x2903: "Server Characteristic Configuration",
        0x2904: "Characteristic Presentation Format", 0x2905: "Characteristic Aggregate Format",
        0x2906: "Valid Range", 0x290B: "Environmental Sensing Configuration",
        0x290C: "Environmental Sensing Measurement", 0x290D: "Environmental Sensing Trigger Setting",
    ]
}
