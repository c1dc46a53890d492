[nltk_data] Downloading package wordnet to /home/<user>/nltk_data...
[nltk_data]   Package wordnet is already up-to-date!
Reading data file...
Extracted data for 100000 programs
Extracted data for 200000 programs
Extracted data for 300000 programs
Extracted data for 400000 programs
Extracted data for 500000 programs
Extracted data for 600000 programs
Extracted data for 700000 programs
  743933 programs/asts in training data
       0 programs/asts ignored by given config
  743933 programs/asts to search over
  959610 data points total
Done!
Model parameters: 50361480.0
1920/191900 (epoch 1) loss: 8.237, gen_loss: 8.051, Ret_loss 8.237, FS_loss 7.963, KL_loss: 13.235, 
	
1925/191900 (epoch 1) loss: 8.336, gen_loss: 8.149, Ret_loss 8.336, FS_loss 8.060, KL_loss: 12.937, 
	
1930/191900 (epoch 1) loss: 8.357, gen_loss: 8.170, Ret_loss 8.357, FS_loss 8.081, KL_loss: 12.978, 
	
1935/191900 (epoch 1) loss: 8.395, gen_loss: 8.208, Ret_loss 8.395, FS_loss 8.119, KL_loss: 12.960, 
	
1940/191900 (epoch 1) loss: 8.394, gen_loss: 8.210, Ret_loss 8.394, FS_loss 8.121, KL_loss: 13.281, 
	
1945/191900 (epoch 1) loss: 8.402, gen_loss: 8.221, Ret_loss 8.402, FS_loss 8.133, KL_loss: 13.839, 
	
1950/191900 (epoch 1) loss: 8.373, gen_loss: 8.195, Ret_loss 8.373, FS_loss 8.108, KL_loss: 14.566, 
	
1955/191900 (epoch 1) loss: 8.376, gen_loss: 8.205, Ret_loss 8.376, FS_loss 8.118, KL_loss: 16.396, 
	
1960/191900 (epoch 1) loss: 8.354, gen_loss: 8.190, Ret_loss 8.354, FS_loss 8.105, KL_loss: 19.469, 
	
1965/191900 (epoch 1) loss: 8.321, gen_loss: 8.167, Ret_loss 8.321, FS_loss 8.085, KL_loss: 25.574, 
	
1970/191900 (epoch 1) loss: 8.311, gen_loss: 8.170, Ret_loss 8.311, FS_loss 8.091, KL_loss: 38.608, 
	
1975/191900 (epoch 1) loss: 8.300, gen_loss: 8.175, Ret_loss 8.300, FS_loss 8.100, KL_loss: 62.116, 
	
1980/191900 (epoch 1) loss: 8.282, gen_loss: 8.178, Ret_loss 8.282, FS_loss 8.109, KL_loss: 106.933, 
	
1985/191900 (epoch 1) loss: 8.253, gen_loss: 8.171, Ret_loss 8.253, FS_loss 8.110, KL_loss: 180.973, 
	
1990/191900 (epoch 1) loss: 8.229, gen_loss: 8.175, Ret_loss 8.229, FS_loss 8.124, KL_loss: 311.021, 
	
1995/191900 (epoch 1) loss: 8.190, gen_loss: 8.167, Ret_loss 8.190, FS_loss 8.128, KL_loss: 522.626, 
	
2000/191900 (epoch 1) loss: 8.155, gen_loss: 8.166, Ret_loss 8.155, FS_loss 8.142, KL_loss: 854.487, 
	
2005/191900 (epoch 1) loss: 8.130, gen_loss: 8.180, Ret_loss 8.130, FS_loss 8.173, KL_loss: 1347.637, 
	
2010/191900 (epoch 1) loss: 8.092, gen_loss: 8.182, Ret_loss 8.092, FS_loss 8.194, KL_loss: 2096.774, 
	
2015/191900 (epoch 1) loss: 8.062, gen_loss: 8.196, Ret_loss 8.062, FS_loss 8.229, KL_loss: 3189.166, 
	
2020/191900 (epoch 1) loss: 8.028, gen_loss: 8.205, Ret_loss 8.028, FS_loss 8.259, KL_loss: 4706.781, 
	
2025/191900 (epoch 1) loss: 7.982, gen_loss: 8.207, Ret_loss 7.982, FS_loss 8.283, KL_loss: 7055.786, 
	
2030/191900 (epoch 1) loss: 7.941, gen_loss: 8.214, Ret_loss 7.941, FS_loss 8.311, KL_loss: 10385.814, 
	
2035/191900 (epoch 1) loss: 7.901, gen_loss: 8.222, Ret_loss 7.901, FS_loss 8.340, KL_loss: 15196.203, 
	
2040/191900 (epoch 1) loss: 7.863, gen_loss: 8.229, Ret_loss 7.863, FS_loss 8.368, KL_loss: 22084.683, 
	
2045/191900 (epoch 1) loss: 7.824, gen_loss: 8.239, Ret_loss 7.824, FS_loss 8.399, KL_loss: 32638.753, 
	
2050/191900 (epoch 1) loss: 7.790, gen_loss: 8.252, Ret_loss 7.790, FS_loss 8.433, KL_loss: 48950.327, 
	
2055/191900 (epoch 1) loss: 7.748, gen_loss: 8.258, Ret_loss 7.748, FS_loss 8.461, KL_loss: 74057.728, 
	
2060/191900 (epoch 1) loss: 7.711, gen_loss: 8.266, Ret_loss 7.711, FS_loss 8.490, KL_loss: 112634.959, 
	
2065/191900 (epoch 1) loss: 7.669, gen_loss: 8.274, Ret_loss 7.669, FS_loss 8.519, KL_loss: 179256.386, 
	
2070/191900 (epoch 1) loss: 7.632, gen_loss: 8.285, Ret_loss 7.632, FS_loss 8.550, KL_loss: 288389.701, 
	
2075/191900 (epoch 1) loss: 7.599, gen_loss: 8.299, Ret_loss 7.599, FS_loss 8.585, KL_loss: 483488.844, 
	
2080/191900 (epoch 1) loss: 7.565, gen_loss: 8.309, Ret_loss 7.565, FS_loss 8.614, KL_loss: 812714.806, 
	
2085/191900 (epoch 1) loss: 7.533, gen_loss: 8.321, Ret_loss 7.533, FS_loss 8.646, KL_loss: 1470730.380, 
	
2090/191900 (epoch 1) loss: 7.501, gen_loss: 8.333, Ret_loss 7.501, FS_loss 8.676, KL_loss: 2732805.172, 
	
2095/191900 (epoch 1) loss: 7.468, gen_loss: 8.344, Ret_loss 7.468, FS_loss 8.706, KL_loss: 5393244.573, 
	
2100/191900 (epoch 1) loss: 7.437, gen_loss: 8.355, Ret_loss 7.437, FS_loss 8.733, KL_loss: 11302140.492, 
	
2105/191900 (epoch 1) loss: 7.402, gen_loss: 8.365, Ret_loss 7.402, FS_loss 8.761, KL_loss: 27942265.163, 
	
2110/191900 (epoch 1) loss: 7.371, gen_loss: 8.375, Ret_loss 7.371, FS_loss 8.787, KL_loss: 80562697.675, 
	
2115/191900 (epoch 1) loss: 7.339, gen_loss: 8.386, Ret_loss 7.339, FS_loss 8.816, KL_loss: 353809497.997, 
	
2120/191900 (epoch 1) loss: 7.307, gen_loss: 8.394, Ret_loss 7.307, FS_loss 8.839, KL_loss: 14325358350.265, 
	
2125/191900 (epoch 1) loss: 7.280, gen_loss: 8.406, Ret_loss 7.280, FS_loss 8.867, KL_loss: 3405513775996336.000, 
	
2130/191900 (epoch 1) loss: 7.250, gen_loss: 8.415, Ret_loss 7.250, FS_loss 8.891, KL_loss: 3325198053464722.500, 
	
2135/191900 (epoch 1) loss: 7.225, gen_loss: 8.428, Ret_loss 7.225, FS_loss 8.919, KL_loss: 3248585618394892.500, 
	
2140/191900 (epoch 1) loss: 7.199, gen_loss: 8.442, Ret_loss 7.199, FS_loss 8.947, KL_loss: 3175421993410303.500, 
	
2145/191900 (epoch 1) loss: 7.173, gen_loss: 8.454, Ret_loss 7.173, FS_loss 8.974, KL_loss: 3105479091483180.500, 
	
2150/191900 (epoch 1) loss: 7.146, gen_loss: 8.465, Ret_loss 7.146, FS_loss 8.999, KL_loss: 3038550842980206.000, 
	
2155/191900 (epoch 1) loss: 7.121, gen_loss: 8.475, Ret_loss 7.121, FS_loss 9.023, KL_loss: 2974446544993770.000, 
	
2160/191900 (epoch 1) loss: 7.094, gen_loss: 8.485, Ret_loss 7.094, FS_loss 9.046, KL_loss: 2912991197947673.000, 
	
2165/191900 (epoch 1) loss: 7.069, gen_loss: 8.496, Ret_loss 7.069, FS_loss 9.070, KL_loss: 2854023927388470.500, 
	
2170/191900 (epoch 1) loss: 7.047, gen_loss: 8.507, Ret_loss 7.047, FS_loss 9.092, KL_loss: 2797396642319912.000, 
	
2175/191900 (epoch 1) loss: 7.022, gen_loss: 8.520, Ret_loss 7.022, FS_loss 9.118, KL_loss: 2742972801414390.500, 
	
2180/191900 (epoch 1) loss: 6.997, gen_loss: 8.533, Ret_loss 6.997, FS_loss 9.144, KL_loss: 2690626237421450.500, 
	
2185/191900 (epoch 1) loss: 6.975, gen_loss: 8.545, Ret_loss 6.975, FS_loss 9.168, KL_loss: 2640240259739893.000, 
	
2190/191900 (epoch 1) loss: 6.952, gen_loss: 8.556, Ret_loss 6.952, FS_loss 9.190, KL_loss: 2591706824787049.000, 
	
2195/191900 (epoch 1) loss: 6.928, gen_loss: 8.566, Ret_loss 6.928, FS_loss 9.210, KL_loss: 2544925657434045.000, 
	
2200/191900 (epoch 1) loss: 6.901, gen_loss: 8.576, Ret_loss 6.901, FS_loss 9.232, KL_loss: 2499803774232808.000, 
	
2205/191900 (epoch 1) loss: 6.881, gen_loss: 8.588, Ret_loss 6.881, FS_loss 9.254, KL_loss: 2456254619436606.000, 
	
2210/191900 (epoch 1) loss: 6.857, gen_loss: 8.597, Ret_loss 6.857, FS_loss 9.273, KL_loss: 2414199504328114.500, 
	
2215/191900 (epoch 1) loss: 6.834, gen_loss: 8.607, Ret_loss 6.834, FS_loss 9.292, KL_loss: 2373605231228486.000, 
	
2220/191900 (epoch 1) loss: 6.814, gen_loss: 8.619, Ret_loss 6.814, FS_loss 9.313, KL_loss: 2334307189687894.000, 
	
2225/191900 (epoch 1) loss: 6.792, gen_loss: 8.630, Ret_loss 6.792, FS_loss 9.332, KL_loss: 2296289184121319.500, 
	
2230/191900 (epoch 1) loss: 6.769, gen_loss: 8.643, Ret_loss 6.769, FS_loss 9.355, KL_loss: 2259489702879397.500, 
	
2235/191900 (epoch 1) loss: 6.751, gen_loss: 8.657, Ret_loss 6.751, FS_loss 9.377, KL_loss: 2223851090511600.250, 
	
2240/191900 (epoch 1) loss: 6.728, gen_loss: 8.669, Ret_loss 6.728, FS_loss 9.399, KL_loss: 2189319279064787.000, 
	
2245/191900 (epoch 1) loss: 6.708, gen_loss: 8.682, Ret_loss 6.708, FS_loss 9.420, KL_loss: 2155843506869685.250, 
	
2250/191900 (epoch 1) loss: 6.689, gen_loss: 8.696, Ret_loss 6.689, FS_loss 9.445, KL_loss: 2123376090388872.000, 
	
2255/191900 (epoch 1) loss: 6.669, gen_loss: 8.705, Ret_loss 6.669, FS_loss 9.461, KL_loss: 2091872162213505.500, 
	
2260/191900 (epoch 1) loss: 6.654, gen_loss: 8.716, Ret_loss 6.654, FS_loss 9.481, KL_loss: 2061289565125503.750, 
	
2265/191900 (epoch 1) loss: 6.635, gen_loss: 8.727, Ret_loss 6.635, FS_loss 9.501, KL_loss: 2031588896305326.500, 
	
2270/191900 (epoch 1) loss: 6.616, gen_loss: 8.739, Ret_loss 6.616, FS_loss 9.523, KL_loss: 2002733652572785.750, 
	
2275/191900 (epoch 1) loss: 6.599, gen_loss: 8.751, Ret_loss 6.599, FS_loss 9.543, KL_loss: 1977615613626918.250, 
	
2280/191900 (epoch 1) loss: 6.583, gen_loss: 8.762, Ret_loss 6.583, FS_loss 9.563, KL_loss: 1950300490846093.000, 
	
2285/191900 (epoch 1) loss: 6.567, gen_loss: 8.773, Ret_loss 6.567, FS_loss 9.581, KL_loss: 1923729643343489.000, 
	
2290/191900 (epoch 1) loss: 6.548, gen_loss: 8.783, Ret_loss 6.548, FS_loss 9.599, KL_loss: 1897873065250992.750, 
	
2295/191900 (epoch 1) loss: 6.532, gen_loss: 8.794, Ret_loss 6.532, FS_loss 9.618, KL_loss: 1872702338249933.750, 
	
2300/191900 (epoch 1) loss: 6.515, gen_loss: 8.803, Ret_loss 6.515, FS_loss 9.634, KL_loss: 1848190531401158.000, 
	
2305/191900 (epoch 1) loss: 6.497, gen_loss: 8.811, Ret_loss 6.497, FS_loss 9.649, KL_loss: 1824312106490286.750, 
	
2310/191900 (epoch 1) loss: 6.481, gen_loss: 8.822, Ret_loss 6.481, FS_loss 9.666, KL_loss: 1801042828420251.750, 
	
2315/191900 (epoch 1) loss: 6.465, gen_loss: 8.829, Ret_loss 6.465, FS_loss 9.679, KL_loss: 1778359683670380.750, 
	
2320/191900 (epoch 1) loss: 6.448, gen_loss: 8.836, Ret_loss 6.448, FS_loss 9.692, KL_loss: 1756240808504984.750, 
	
2325/191900 (epoch 1) loss: 6.432, gen_loss: 8.845, Ret_loss 6.432, FS_loss 9.706, KL_loss: 1734665424211845.250, 
	
2330/191900 (epoch 1) loss: 6.415, gen_loss: 8.853, Ret_loss 6.415, FS_loss 9.720, KL_loss: 1713613803125594.000, 
	
2335/191900 (epoch 1) loss: 6.399, gen_loss: 8.862, Ret_loss 6.399, FS_loss 9.734, KL_loss: 1693067254291692.250, 
	
2340/191900 (epoch 1) loss: 6.385, gen_loss: 8.871, Ret_loss 6.385, FS_loss 9.747, KL_loss: 1673008285727562.500, 
	
2345/191900 (epoch 1) loss: 6.370, gen_loss: 8.879, Ret_loss 6.370, FS_loss 9.760, KL_loss: 1653421186198581.250, 
	
2350/191900 (epoch 1) loss: 6.352, gen_loss: 8.887, Ret_loss 6.352, FS_loss 9.773, KL_loss: 1634286038077476.250, 
	
2355/191900 (epoch 1) loss: 6.337, gen_loss: 8.895, Ret_loss 6.337, FS_loss 9.787, KL_loss: 1615587802119140.500, 
	
2360/191900 (epoch 1) loss: 6.320, gen_loss: 8.902, Ret_loss 6.320, FS_loss 9.799, KL_loss: 1597312280154981.250, 
	
2365/191900 (epoch 1) loss: 6.306, gen_loss: 8.910, Ret_loss 6.306, FS_loss 9.812, KL_loss: 1579445491980006.750, 
	
2370/191900 (epoch 1) loss: 6.292, gen_loss: 8.919, Ret_loss 6.292, FS_loss 9.825, KL_loss: 1561973968851472.500, 
	
2375/191900 (epoch 1) loss: 6.278, gen_loss: 8.927, Ret_loss 6.278, FS_loss 9.837, KL_loss: 1544884776373584.750, 
	
20660/191900 (epoch 10) loss: 2.490, gen_loss: 14.164, Ret_loss 2.490, FS_loss 24.596, KL_loss: 1044316379930668.000, 
	
20665/191900 (epoch 10) loss: 2.490, gen_loss: 14.164, Ret_loss 2.490, FS_loss 24.597, KL_loss: 1040779866890689.000, 
	
20670/191900 (epoch 10) loss: 2.490, gen_loss: 14.165, Ret_loss 2.490, FS_loss 24.598, KL_loss: 1037305329062399.125, 
	
20675/191900 (epoch 10) loss: 2.490, gen_loss: 14.166, Ret_loss 2.490, FS_loss 24.600, KL_loss: 1033885440034625.250, 
	
20680/191900 (epoch 10) loss: 2.490, gen_loss: 14.167, Ret_loss 2.490, FS_loss 24.603, KL_loss: 1030419458649169.250, 
	
20685/191900 (epoch 10) loss: 2.490, gen_loss: 14.168, Ret_loss 2.490, FS_loss 24.603, KL_loss: 1027000718563661.500, 
	
20690/191900 (epoch 10) loss: 2.490, gen_loss: 14.167, Ret_loss 2.490, FS_loss 24.603, KL_loss: 1023580519222523.250, 
	
20695/191900 (epoch 10) loss: 2.489, gen_loss: 14.167, Ret_loss 2.489, FS_loss 24.602, KL_loss: 1020208426334727.000, 
	
20700/191900 (epoch 10) loss: 2.489, gen_loss: 14.167, Ret_loss 2.489, FS_loss 24.603, KL_loss: 1349908759233769.250, 
	
20705/191900 (epoch 10) loss: 2.489, gen_loss: 14.169, Ret_loss 2.489, FS_loss 24.606, KL_loss: 1345456797154325.000, 
	
20710/191900 (epoch 10) loss: 2.489, gen_loss: 14.170, Ret_loss 2.489, FS_loss 24.609, KL_loss: 1341352789486048.250, 
	
20715/191900 (epoch 10) loss: 2.489, gen_loss: 14.170, Ret_loss 2.489, FS_loss 24.609, KL_loss: 1336957937008922.750, 
	
20720/191900 (epoch 10) loss: 2.489, gen_loss: 14.171, Ret_loss 2.489, FS_loss 24.611, KL_loss: 1332594991706819.250, 
	
20725/191900 (epoch 10) loss: 2.488, gen_loss: 14.172, Ret_loss 2.488, FS_loss 24.612, KL_loss: 1328257521670736.750, 
	
20730/191900 (epoch 10) loss: 2.489, gen_loss: 14.173, Ret_loss 2.489, FS_loss 24.614, KL_loss: 1323959326620107.250, 
	
20735/191900 (epoch 10) loss: 2.488, gen_loss: 14.173, Ret_loss 2.488, FS_loss 24.615, KL_loss: 1319679271722547.750, 
	
20740/191900 (epoch 10) loss: 2.488, gen_loss: 14.173, Ret_loss 2.488, FS_loss 24.614, KL_loss: 1404910245798617.750, 
	
20745/191900 (epoch 10) loss: 2.489, gen_loss: 14.174, Ret_loss 2.489, FS_loss 24.616, KL_loss: 1400404704705460.500, 
	
20750/191900 (epoch 10) loss: 2.488, gen_loss: 14.174, Ret_loss 2.488, FS_loss 24.616, KL_loss: 1396157884766672.000, 
	
20755/191900 (epoch 10) loss: 2.488, gen_loss: 14.174, Ret_loss 2.488, FS_loss 24.618, KL_loss: 1391756808173916.750, 
	
20760/191900 (epoch 10) loss: 2.488, gen_loss: 14.174, Ret_loss 2.488, FS_loss 24.616, KL_loss: 1387594959400833.000, 
	
20765/191900 (epoch 10) loss: 2.488, gen_loss: 14.175, Ret_loss 2.488, FS_loss 24.618, KL_loss: 1383194477049482.500, 
	
20770/191900 (epoch 10) loss: 2.489, gen_loss: 14.176, Ret_loss 2.489, FS_loss 24.620, KL_loss: 1379002593542963.500, 
	
20775/191900 (epoch 10) loss: 2.489, gen_loss: 14.176, Ret_loss 2.489, FS_loss 24.620, KL_loss: 1374666872806598.500, 
	
20780/191900 (epoch 10) loss: 2.488, gen_loss: 14.178, Ret_loss 2.488, FS_loss 24.622, KL_loss: 1370373671588615.750, 
	
20785/191900 (epoch 10) loss: 2.489, gen_loss: 14.178, Ret_loss 2.489, FS_loss 24.623, KL_loss: 1366134381180297.500, 
	
20790/191900 (epoch 10) loss: 2.489, gen_loss: 14.178, Ret_loss 2.489, FS_loss 24.622, KL_loss: 1361870284606851.750, 
	
20795/191900 (epoch 10) loss: 2.489, gen_loss: 14.177, Ret_loss 2.489, FS_loss 24.621, KL_loss: 1357679083383593.250, 
	
20800/191900 (epoch 10) loss: 2.489, gen_loss: 14.177, Ret_loss 2.489, FS_loss 24.621, KL_loss: 1353466803446559.250, 
	
20805/191900 (epoch 10) loss: 2.489, gen_loss: 14.178, Ret_loss 2.489, FS_loss 24.622, KL_loss: 1349358335244887.000, 
	
20810/191900 (epoch 10) loss: 2.488, gen_loss: 14.179, Ret_loss 2.488, FS_loss 24.624, KL_loss: 1345197969734902.500, 
	
20815/191900 (epoch 10) loss: 2.488, gen_loss: 14.180, Ret_loss 2.488, FS_loss 24.627, KL_loss: 1341065517808002.250, 
	
20820/191900 (epoch 10) loss: 2.488, gen_loss: 14.180, Ret_loss 2.488, FS_loss 24.626, KL_loss: 1338306933276351.250, 
	
20825/191900 (epoch 10) loss: 2.488, gen_loss: 14.181, Ret_loss 2.488, FS_loss 24.628, KL_loss: 1334224498778743.750, 
	
20830/191900 (epoch 10) loss: 2.488, gen_loss: 14.182, Ret_loss 2.488, FS_loss 24.630, KL_loss: 1330181018953962.250, 
	
20835/191900 (epoch 10) loss: 2.487, gen_loss: 14.183, Ret_loss 2.487, FS_loss 24.632, KL_loss: 1326149687449956.750, 
	
20840/191900 (epoch 10) loss: 2.487, gen_loss: 14.184, Ret_loss 2.487, FS_loss 24.633, KL_loss: 1322503441951883.000, 
	
20845/191900 (epoch 10) loss: 2.487, gen_loss: 14.185, Ret_loss 2.487, FS_loss 24.635, KL_loss: 1318627870924612.750, 
	
20850/191900 (epoch 10) loss: 2.488, gen_loss: 14.186, Ret_loss 2.488, FS_loss 24.636, KL_loss: 1314666135646783.250, 
	
20855/191900 (epoch 10) loss: 2.488, gen_loss: 14.186, Ret_loss 2.488, FS_loss 24.636, KL_loss: 1310723918337382.500, 
	
20860/191900 (epoch 10) loss: 2.488, gen_loss: 14.187, Ret_loss 2.488, FS_loss 24.637, KL_loss: 1306887511215023.250, 
	
20865/191900 (epoch 10) loss: 2.488, gen_loss: 14.187, Ret_loss 2.488, FS_loss 24.637, KL_loss: 1330895105473987.750, 
	
20870/191900 (epoch 10) loss: 2.488, gen_loss: 14.188, Ret_loss 2.488, FS_loss 24.639, KL_loss: 1326936469448986.750, 
	
20875/191900 (epoch 10) loss: 2.488, gen_loss: 14.188, Ret_loss 2.488, FS_loss 24.640, KL_loss: 1323012400018337.500, 
	
20880/191900 (epoch 10) loss: 2.487, gen_loss: 14.189, Ret_loss 2.487, FS_loss 24.642, KL_loss: 1319100497180839.500, 
	
20885/191900 (epoch 10) loss: 2.487, gen_loss: 14.189, Ret_loss 2.487, FS_loss 24.643, KL_loss: 1315212152246566.250, 
	
20890/191900 (epoch 10) loss: 2.487, gen_loss: 14.189, Ret_loss 2.487, FS_loss 24.642, KL_loss: 1311346229775137.000, 
	
20895/191900 (epoch 10) loss: 2.487, gen_loss: 14.190, Ret_loss 2.487, FS_loss 24.643, KL_loss: 1307503806435998.250, 
	
20900/191900 (epoch 10) loss: 2.488, gen_loss: 14.190, Ret_loss 2.488, FS_loss 24.643, KL_loss: 1303683029085241.250, 
	
20905/191900 (epoch 10) loss: 2.488, gen_loss: 14.190, Ret_loss 2.488, FS_loss 24.644, KL_loss: 1299886268114301.000, 
	
20910/191900 (epoch 10) loss: 2.487, gen_loss: 14.190, Ret_loss 2.487, FS_loss 24.642, KL_loss: 1296112401481106.000, 
	
20915/191900 (epoch 10) loss: 2.487, gen_loss: 14.190, Ret_loss 2.487, FS_loss 24.643, KL_loss: 1292358963853278.000, 
	
20920/191900 (epoch 10) loss: 2.487, gen_loss: 14.191, Ret_loss 2.487, FS_loss 24.644, KL_loss: 1288636245768164.000, 
	
20925/191900 (epoch 10) loss: 2.487, gen_loss: 14.191, Ret_loss 2.487, FS_loss 24.646, KL_loss: 1284925966034752.000, 
	
20930/191900 (epoch 10) loss: 2.487, gen_loss: 14.192, Ret_loss 2.487, FS_loss 24.647, KL_loss: 1281285369846350.750, 
	
20935/191900 (epoch 10) loss: 2.486, gen_loss: 14.193, Ret_loss 2.486, FS_loss 24.649, KL_loss: 1277618093797949.750, 
	
20940/191900 (epoch 10) loss: 2.486, gen_loss: 14.195, Ret_loss 2.486, FS_loss 24.651, KL_loss: 1274068684543925.500, 
	
20945/191900 (epoch 10) loss: 2.486, gen_loss: 14.195, Ret_loss 2.486, FS_loss 24.652, KL_loss: 1270447691377434.500, 
	
20950/191900 (epoch 10) loss: 2.486, gen_loss: 14.195, Ret_loss 2.486, FS_loss 24.652, KL_loss: 1266848192727994.000, 
	
20955/191900 (epoch 10) loss: 2.486, gen_loss: 14.195, Ret_loss 2.486, FS_loss 24.652, KL_loss: 1263331685612331.000, 
	
20960/191900 (epoch 10) loss: 2.486, gen_loss: 14.197, Ret_loss 2.486, FS_loss 24.655, KL_loss: 1259765534940797.000, 
	
20965/191900 (epoch 10) loss: 2.486, gen_loss: 14.197, Ret_loss 2.486, FS_loss 24.655, KL_loss: 1256253973399262.750, 
	
20970/191900 (epoch 10) loss: 2.486, gen_loss: 14.198, Ret_loss 2.486, FS_loss 24.657, KL_loss: 1252728395861983.000, 
	
20975/191900 (epoch 10) loss: 2.486, gen_loss: 14.199, Ret_loss 2.486, FS_loss 24.659, KL_loss: 1249233224182433.500, 
	
20980/191900 (epoch 10) loss: 2.486, gen_loss: 14.200, Ret_loss 2.486, FS_loss 24.661, KL_loss: 1245753958900628.250, 
	
20985/191900 (epoch 10) loss: 2.486, gen_loss: 14.201, Ret_loss 2.486, FS_loss 24.662, KL_loss: 1242286986388903.250, 
	
20990/191900 (epoch 10) loss: 2.486, gen_loss: 14.201, Ret_loss 2.486, FS_loss 24.663, KL_loss: 1238964068039354.500, 
	
20995/191900 (epoch 10) loss: 2.486, gen_loss: 14.201, Ret_loss 2.486, FS_loss 24.663, KL_loss: 1235534985787069.000, 
	
21000/191900 (epoch 10) loss: 2.486, gen_loss: 14.202, Ret_loss 2.486, FS_loss 24.664, KL_loss: 1232422746168866.000, 
	
21005/191900 (epoch 10) loss: 2.486, gen_loss: 14.202, Ret_loss 2.486, FS_loss 24.665, KL_loss: 1229029899258105.500, 
	
21010/191900 (epoch 10) loss: 2.486, gen_loss: 14.203, Ret_loss 2.486, FS_loss 24.667, KL_loss: 1225655599343344.000, 
	
21015/191900 (epoch 10) loss: 2.486, gen_loss: 14.204, Ret_loss 2.486, FS_loss 24.668, KL_loss: 1222303093140350.250, 
	
21020/191900 (epoch 10) loss: 2.487, gen_loss: 14.204, Ret_loss 2.487, FS_loss 24.670, KL_loss: 1218965597676704.750, 
	
21025/191900 (epoch 10) loss: 2.486, gen_loss: 14.205, Ret_loss 2.486, FS_loss 24.671, KL_loss: 1215667661482014.500, 
	
21030/191900 (epoch 10) loss: 2.486, gen_loss: 14.205, Ret_loss 2.486, FS_loss 24.672, KL_loss: 1212367029927125.250, 
	
21035/191900 (epoch 10) loss: 2.486, gen_loss: 14.205, Ret_loss 2.486, FS_loss 24.673, KL_loss: 1209105845768994.500, 
	
21040/191900 (epoch 10) loss: 2.486, gen_loss: 14.205, Ret_loss 2.486, FS_loss 24.674, KL_loss: 1205841486628408.500, 
	
21045/191900 (epoch 10) loss: 2.486, gen_loss: 14.207, Ret_loss 2.486, FS_loss 24.678, KL_loss: 1202594067290058.250, 
	
21050/191900 (epoch 10) loss: 2.486, gen_loss: 14.206, Ret_loss 2.486, FS_loss 24.678, KL_loss: 1199385616668505.000, 
	
21055/191900 (epoch 10) loss: 2.486, gen_loss: 14.206, Ret_loss 2.486, FS_loss 24.678, KL_loss: 1196172929341476.500, 
	
21060/191900 (epoch 10) loss: 2.487, gen_loss: 14.206, Ret_loss 2.487, FS_loss 24.678, KL_loss: 1193059970589025.750, 
	
21065/191900 (epoch 10) loss: 2.487, gen_loss: 14.206, Ret_loss 2.487, FS_loss 24.680, KL_loss: 1189958033479596.250, 
	
21070/191900 (epoch 10) loss: 2.486, gen_loss: 14.207, Ret_loss 2.486, FS_loss 24.682, KL_loss: 1186796653490926.500, 
	
21075/191900 (epoch 10) loss: 2.487, gen_loss: 14.206, Ret_loss 2.487, FS_loss 24.682, KL_loss: 1183693804691020.750, 
	
21080/191900 (epoch 10) loss: 2.487, gen_loss: 14.206, Ret_loss 2.487, FS_loss 24.681, KL_loss: 1180566470555797.750, 
	
21085/191900 (epoch 10) loss: 2.487, gen_loss: 14.206, Ret_loss 2.487, FS_loss 24.682, KL_loss: 1177471795355984.250, 
	
21090/191900 (epoch 10) loss: 2.487, gen_loss: 14.206, Ret_loss 2.487, FS_loss 24.683, KL_loss: 1174380037482795.750, 
	
21095/191900 (epoch 10) loss: 2.486, gen_loss: 14.207, Ret_loss 2.486, FS_loss 24.685, KL_loss: 1171357129789478.000, 
	
21100/191900 (epoch 10) loss: 2.486, gen_loss: 14.207, Ret_loss 2.486, FS_loss 24.687, KL_loss: 1168368844208443.250, 
	
21105/191900 (epoch 10) loss: 2.487, gen_loss: 14.206, Ret_loss 2.487, FS_loss 24.687, KL_loss: 1165320474212595.000, 
	
21110/191900 (epoch 11) loss: 2.427, gen_loss: 14.508, Ret_loss 2.427, FS_loss 25.817, KL_loss: 1085159145472.000, 
	
21115/191900 (epoch 11) loss: 2.457, gen_loss: 14.406, Ret_loss 2.457, FS_loss 25.547, KL_loss: 600110745892.571, 
	
21120/191900 (epoch 11) loss: 2.463, gen_loss: 14.334, Ret_loss 2.463, FS_loss 25.358, KL_loss: 5757443877546.667, 
	
21125/191900 (epoch 11) loss: 2.449, gen_loss: 14.299, Ret_loss 2.449, FS_loss 25.245, KL_loss: 4220766247514.353, 
	
21130/191900 (epoch 11) loss: 2.450, gen_loss: 14.339, Ret_loss 2.450, FS_loss 25.288, KL_loss: 6803438163781.818, 
	
21135/191900 (epoch 11) loss: 2.448, gen_loss: 14.335, Ret_loss 2.448, FS_loss 25.308, KL_loss: 16302432604311.703, 
	
21140/191900 (epoch 11) loss: 2.464, gen_loss: 14.311, Ret_loss 2.464, FS_loss 25.273, KL_loss: 14339561477120.000, 
	
21145/191900 (epoch 11) loss: 2.451, gen_loss: 14.279, Ret_loss 2.451, FS_loss 25.243, KL_loss: 12578924392115.893, 
	
21150/191900 (epoch 11) loss: 2.442, gen_loss: 14.265, Ret_loss 2.442, FS_loss 25.176, KL_loss: 11290959076985.904, 
	
21155/191900 (epoch 11) loss: 2.453, gen_loss: 14.278, Ret_loss 2.453, FS_loss 25.183, KL_loss: 10238827576995.404, 
	
21160/191900 (epoch 11) loss: 2.454, gen_loss: 14.277, Ret_loss 2.454, FS_loss 25.168, KL_loss: 452927621675096.625, 
	
21165/191900 (epoch 11) loss: 2.452, gen_loss: 14.276, Ret_loss 2.452, FS_loss 25.159, KL_loss: 413197666368035.938, 
	
21170/191900 (epoch 11) loss: 2.460, gen_loss: 14.267, Ret_loss 2.460, FS_loss 25.139, KL_loss: 379891453318647.750, 
	
21175/191900 (epoch 11) loss: 2.457, gen_loss: 14.278, Ret_loss 2.457, FS_loss 25.138, KL_loss: 351542798970688.938, 
	
21180/191900 (epoch 11) loss: 2.458, gen_loss: 14.301, Ret_loss 2.458, FS_loss 25.169, KL_loss: 327160072226353.750, 
	
21185/191900 (epoch 11) loss: 2.462, gen_loss: 14.301, Ret_loss 2.462, FS_loss 25.177, KL_loss: 305919090955563.250, 
	
21190/191900 (epoch 11) loss: 2.461, gen_loss: 14.323, Ret_loss 2.461, FS_loss 25.195, KL_loss: 287811709423409.938, 
	
21195/191900 (epoch 11) loss: 2.451, gen_loss: 14.333, Ret_loss 2.451, FS_loss 25.211, KL_loss: 271276036441941.344, 
	
21200/191900 (epoch 11) loss: 2.449, gen_loss: 14.349, Ret_loss 2.449, FS_loss 25.221, KL_loss: 256743603318422.250, 
	
21205/191900 (epoch 11) loss: 2.450, gen_loss: 14.357, Ret_loss 2.450, FS_loss 25.226, KL_loss: 243565052927065.719, 
	
21210/191900 (epoch 11) loss: 2.447, gen_loss: 14.351, Ret_loss 2.447, FS_loss 25.213, KL_loss: 231721347509704.781, 
	
21215/191900 (epoch 11) loss: 2.445, gen_loss: 14.356, Ret_loss 2.445, FS_loss 25.204, KL_loss: 221802927792046.656, 
	
21220/191900 (epoch 11) loss: 2.450, gen_loss: 14.360, Ret_loss 2.450, FS_loss 25.200, KL_loss: 211984064364978.281, 
	
21225/191900 (epoch 11) loss: 2.456, gen_loss: 14.364, Ret_loss 2.456, FS_loss 25.195, KL_loss: 204740746013700.375, 
	
21230/191900 (epoch 11) loss: 2.458, gen_loss: 14.371, Ret_loss 2.458, FS_loss 25.196, KL_loss: 196358931748221.906, 
	
21235/191900 (epoch 11) loss: 2.458, gen_loss: 14.380, Ret_loss 2.458, FS_loss 25.206, KL_loss: 188890701937135.875, 
	
21240/191900 (epoch 11) loss: 2.467, gen_loss: 14.378, Ret_loss 2.467, FS_loss 25.197, KL_loss: 181755289411456.000, 
	
21245/191900 (epoch 11) loss: 2.467, gen_loss: 14.374, Ret_loss 2.467, FS_loss 25.187, KL_loss: 259171406668669.188, 
	
21250/191900 (epoch 11) loss: 2.466, gen_loss: 14.368, Ret_loss 2.466, FS_loss 25.169, KL_loss: 250109280786399.562, 
	
21255/191900 (epoch 11) loss: 2.461, gen_loss: 14.377, Ret_loss 2.461, FS_loss 25.180, KL_loss: 241867314674816.875, 
	
21260/191900 (epoch 11) loss: 2.461, gen_loss: 14.370, Ret_loss 2.461, FS_loss 25.165, KL_loss: 238531064751046.750, 
	
21265/191900 (epoch 11) loss: 2.458, gen_loss: 14.378, Ret_loss 2.458, FS_loss 25.168, KL_loss: 230967303681170.750, 
	
21270/191900 (epoch 11) loss: 2.458, gen_loss: 14.366, Ret_loss 2.458, FS_loss 25.142, KL_loss: 223969224459399.906, 
	
21275/191900 (epoch 11) loss: 2.457, gen_loss: 14.376, Ret_loss 2.457, FS_loss 25.148, KL_loss: 217345108853272.531, 
	
21280/191900 (epoch 11) loss: 2.455, gen_loss: 14.372, Ret_loss 2.455, FS_loss 25.136, KL_loss: 211041447216529.875, 
	
21285/191900 (epoch 11) loss: 2.458, gen_loss: 14.377, Ret_loss 2.458, FS_loss 25.146, KL_loss: 205087424470528.000, 
	
21290/191900 (epoch 11) loss: 2.459, gen_loss: 14.377, Ret_loss 2.459, FS_loss 25.138, KL_loss: 199744312311445.094, 
	
21295/191900 (epoch 11) loss: 2.456, gen_loss: 14.379, Ret_loss 2.456, FS_loss 25.145, KL_loss: 194409655283424.500, 
	
21300/191900 (epoch 11) loss: 2.459, gen_loss: 14.377, Ret_loss 2.459, FS_loss 25.141, KL_loss: 189386544569938.656, 
	
21305/191900 (epoch 11) loss: 2.459, gen_loss: 14.373, Ret_loss 2.459, FS_loss 25.136, KL_loss: 184675785398279.812, 
	
21310/191900 (epoch 11) loss: 2.458, gen_loss: 14.374, Ret_loss 2.458, FS_loss 25.140, KL_loss: 180479710149761.281, 
	
21315/191900 (epoch 11) loss: 2.461, gen_loss: 14.380, Ret_loss 2.461, FS_loss 25.150, KL_loss: 176161891095099.375, 
	
21320/191900 (epoch 11) loss: 2.459, gen_loss: 14.387, Ret_loss 2.459, FS_loss 25.163, KL_loss: 172094843223984.312, 
	
21325/191900 (epoch 11) loss: 2.457, gen_loss: 14.383, Ret_loss 2.457, FS_loss 25.158, KL_loss: 168247601314931.625, 
	
21330/191900 (epoch 11) loss: 2.457, gen_loss: 14.382, Ret_loss 2.457, FS_loss 25.157, KL_loss: 165169291515292.844, 
	
21335/191900 (epoch 11) loss: 2.459, gen_loss: 14.382, Ret_loss 2.459, FS_loss 25.156, KL_loss: 161535534795372.250, 
	
21340/191900 (epoch 11) loss: 2.461, gen_loss: 14.383, Ret_loss 2.461, FS_loss 25.161, KL_loss: 158503249454678.062, 
	
21345/191900 (epoch 11) loss: 2.461, gen_loss: 14.382, Ret_loss 2.461, FS_loss 25.158, KL_loss: 155166359635231.312, 
	
21350/191900 (epoch 11) loss: 2.462, gen_loss: 14.389, Ret_loss 2.462, FS_loss 25.171, KL_loss: 161031291053045.406, 
	
21355/191900 (epoch 11) loss: 2.463, gen_loss: 14.387, Ret_loss 2.463, FS_loss 25.168, KL_loss: 158209647187128.500, 
	
21360/191900 (epoch 11) loss: 2.462, gen_loss: 14.387, Ret_loss 2.462, FS_loss 25.171, KL_loss: 155077638626805.844, 
	
21365/191900 (epoch 11) loss: 2.463, gen_loss: 14.390, Ret_loss 2.463, FS_loss 25.180, KL_loss: 152319422716451.875, 
	
21370/191900 (epoch 11) loss: 2.459, gen_loss: 14.388, Ret_loss 2.459, FS_loss 25.176, KL_loss: 149441629567020.938, 
	
21375/191900 (epoch 11) loss: 2.461, gen_loss: 14.386, Ret_loss 2.461, FS_loss 25.173, KL_loss: 146779859166440.031, 
	
21380/191900 (epoch 11) loss: 2.462, gen_loss: 14.390, Ret_loss 2.462, FS_loss 25.182, KL_loss: 144101553816032.000, 
	
21385/191900 (epoch 11) loss: 2.462, gen_loss: 14.391, Ret_loss 2.462, FS_loss 25.186, KL_loss: 141587144121745.094, 
	
21390/191900 (epoch 11) loss: 2.460, gen_loss: 14.393, Ret_loss 2.460, FS_loss 25.194, KL_loss: 139094668687198.406, 
	
21395/191900 (epoch 11) loss: 2.463, gen_loss: 14.391, Ret_loss 2.463, FS_loss 25.190, KL_loss: 151826664080471.406, 
	
21400/191900 (epoch 11) loss: 2.461, gen_loss: 14.399, Ret_loss 2.461, FS_loss 25.205, KL_loss: 149227143523575.219, 
	
21405/191900 (epoch 11) loss: 2.461, gen_loss: 14.396, Ret_loss 2.461, FS_loss 25.201, KL_loss: 146760815795629.250, 
	
21410/191900 (epoch 11) loss: 2.459, gen_loss: 14.399, Ret_loss 2.459, FS_loss 25.205, KL_loss: 144331807972499.500, 
	
21415/191900 (epoch 11) loss: 2.459, gen_loss: 14.399, Ret_loss 2.459, FS_loss 25.205, KL_loss: 147916651240329.594, 
	
21420/191900 (epoch 11) loss: 2.458, gen_loss: 14.402, Ret_loss 2.458, FS_loss 25.209, KL_loss: 145546379059641.438, 
	
21425/191900 (epoch 11) loss: 2.459, gen_loss: 14.400, Ret_loss 2.459, FS_loss 25.208, KL_loss: 143252092863696.344, 
	
21430/191900 (epoch 11) loss: 2.459, gen_loss: 14.402, Ret_loss 2.459, FS_loss 25.216, KL_loss: 141060717413635.188, 
	
21435/191900 (epoch 11) loss: 2.459, gen_loss: 14.403, Ret_loss 2.459, FS_loss 25.217, KL_loss: 140417741891839.219, 
	
21440/191900 (epoch 11) loss: 2.458, gen_loss: 14.406, Ret_loss 2.458, FS_loss 25.225, KL_loss: 138303503168874.406, 
	
21445/191900 (epoch 11) loss: 2.457, gen_loss: 14.409, Ret_loss 2.457, FS_loss 25.231, KL_loss: 136252546460129.609, 
	
21450/191900 (epoch 11) loss: 2.457, gen_loss: 14.412, Ret_loss 2.457, FS_loss 25.237, KL_loss: 136671674510056.047, 
	
21455/191900 (epoch 11) loss: 2.457, gen_loss: 14.411, Ret_loss 2.457, FS_loss 25.236, KL_loss: 134703632289232.781, 
	
21460/191900 (epoch 11) loss: 2.457, gen_loss: 14.413, Ret_loss 2.457, FS_loss 25.241, KL_loss: 132827356636923.641, 
	
21465/191900 (epoch 11) loss: 2.458, gen_loss: 14.413, Ret_loss 2.458, FS_loss 25.243, KL_loss: 130970109534777.359, 
	
21470/191900 (epoch 11) loss: 2.460, gen_loss: 14.415, Ret_loss 2.460, FS_loss 25.246, KL_loss: 129188495345286.359, 
	
21475/191900 (epoch 11) loss: 2.462, gen_loss: 14.423, Ret_loss 2.462, FS_loss 25.258, KL_loss: 127432736804692.406, 
	
21480/191900 (epoch 11) loss: 2.461, gen_loss: 14.421, Ret_loss 2.461, FS_loss 25.253, KL_loss: 125802684377634.406, 
	
21485/191900 (epoch 11) loss: 2.460, gen_loss: 14.425, Ret_loss 2.460, FS_loss 25.263, KL_loss: 124136524700648.906, 
	
21490/191900 (epoch 11) loss: 2.460, gen_loss: 14.425, Ret_loss 2.460, FS_loss 25.266, KL_loss: 122870723079029.953, 
	
21495/191900 (epoch 11) loss: 2.458, gen_loss: 14.426, Ret_loss 2.458, FS_loss 25.270, KL_loss: 122579685545149.188, 
	
21500/191900 (epoch 11) loss: 2.457, gen_loss: 14.427, Ret_loss 2.457, FS_loss 25.276, KL_loss: 121048285397217.953, 
	
21505/191900 (epoch 11) loss: 2.457, gen_loss: 14.425, Ret_loss 2.457, FS_loss 25.275, KL_loss: 119548412123611.891, 
	
21510/191900 (epoch 11) loss: 2.456, gen_loss: 14.422, Ret_loss 2.456, FS_loss 25.270, KL_loss: 118147825908268.578, 
	
21515/191900 (epoch 11) loss: 2.456, gen_loss: 14.422, Ret_loss 2.456, FS_loss 25.269, KL_loss: 116829906156698.734, 
	
21520/191900 (epoch 11) loss: 2.455, gen_loss: 14.422, Ret_loss 2.455, FS_loss 25.272, KL_loss: 14289744827350140.000, 
	
21525/191900 (epoch 11) loss: 2.455, gen_loss: 14.422, Ret_loss 2.455, FS_loss 25.273, KL_loss: 14118419746771656.000, 
	
21530/191900 (epoch 11) loss: 2.455, gen_loss: 14.426, Ret_loss 2.455, FS_loss 25.283, KL_loss: 13951474784452118.000, 
	
21535/191900 (epoch 11) loss: 2.456, gen_loss: 14.425, Ret_loss 2.456, FS_loss 25.281, KL_loss: 13788111816089748.000, 
	
21540/191900 (epoch 11) loss: 2.455, gen_loss: 14.429, Ret_loss 2.455, FS_loss 25.292, KL_loss: 13628611813271870.000, 
	
21545/191900 (epoch 11) loss: 2.456, gen_loss: 14.433, Ret_loss 2.456, FS_loss 25.299, KL_loss: 13472684180648410.000, 
	
21550/191900 (epoch 11) loss: 2.456, gen_loss: 14.433, Ret_loss 2.456, FS_loss 25.304, KL_loss: 13320371293730134.000, 
	
21555/191900 (epoch 11) loss: 2.457, gen_loss: 14.431, Ret_loss 2.457, FS_loss 25.302, KL_loss: 13171376454863654.000, 
	
21560/191900 (epoch 11) loss: 2.457, gen_loss: 14.428, Ret_loss 2.457, FS_loss 25.299, KL_loss: 13026202096735580.000, 
	
21565/191900 (epoch 11) loss: 2.457, gen_loss: 14.427, Ret_loss 2.457, FS_loss 25.299, KL_loss: 12883684230838918.000, 
	
21570/191900 (epoch 11) loss: 2.457, gen_loss: 14.428, Ret_loss 2.457, FS_loss 25.301, KL_loss: 12744276509931222.000, 
	
21575/191900 (epoch 11) loss: 2.458, gen_loss: 14.429, Ret_loss 2.458, FS_loss 25.302, KL_loss: 12607829615615346.000, 
	
21580/191900 (epoch 11) loss: 2.459, gen_loss: 14.430, Ret_loss 2.459, FS_loss 25.305, KL_loss: 12474300021640344.000, 
	
21585/191900 (epoch 11) loss: 2.457, gen_loss: 14.431, Ret_loss 2.457, FS_loss 25.309, KL_loss: 12343546240621712.000, 
	
21590/191900 (epoch 11) loss: 2.457, gen_loss: 14.433, Ret_loss 2.457, FS_loss 25.315, KL_loss: 12246801895566624.000, 
	
21595/191900 (epoch 11) loss: 2.457, gen_loss: 14.434, Ret_loss 2.457, FS_loss 25.314, KL_loss: 12121080344718574.000, 
	
21600/191900 (epoch 11) loss: 2.457, gen_loss: 14.432, Ret_loss 2.457, FS_loss 25.312, KL_loss: 12107844794121170.000, 
	
21605/191900 (epoch 11) loss: 2.457, gen_loss: 14.432, Ret_loss 2.457, FS_loss 25.312, KL_loss: 11986057699278020.000, 
	
21610/191900 (epoch 11) loss: 2.457, gen_loss: 14.431, Ret_loss 2.457, FS_loss 25.311, KL_loss: 11866712137460892.000, 
	
21615/191900 (epoch 11) loss: 2.457, gen_loss: 14.431, Ret_loss 2.457, FS_loss 25.312, KL_loss: 11749694817718276.000, 
	
21620/191900 (epoch 11) loss: 2.457, gen_loss: 14.429, Ret_loss 2.457, FS_loss 25.309, KL_loss: 11634996139019068.000, 
	
21625/191900 (epoch 11) loss: 2.455, gen_loss: 14.427, Ret_loss 2.455, FS_loss 25.308, KL_loss: 11522477110410722.000, 
	
21630/191900 (epoch 11) loss: 2.453, gen_loss: 14.425, Ret_loss 2.453, FS_loss 25.304, KL_loss: 11412130616911170.000, 
	
21635/191900 (epoch 11) loss: 2.453, gen_loss: 14.427, Ret_loss 2.453, FS_loss 25.309, KL_loss: 11303857737411632.000, 
	
21640/191900 (epoch 11) loss: 2.453, gen_loss: 14.428, Ret_loss 2.453, FS_loss 25.315, KL_loss: 11200263358613362.000, 
	
21645/191900 (epoch 11) loss: 2.451, gen_loss: 14.427, Ret_loss 2.451, FS_loss 25.315, KL_loss: 11095987720716650.000, 
	
21650/191900 (epoch 11) loss: 2.450, gen_loss: 14.431, Ret_loss 2.450, FS_loss 25.321, KL_loss: 10996960426070064.000, 
	
21655/191900 (epoch 11) loss: 2.449, gen_loss: 14.433, Ret_loss 2.449, FS_loss 25.326, KL_loss: 10896440111422844.000, 
	
